/* breakwater — umbrella header: everything public. */
#ifndef BREAKWATER_H
#define BREAKWATER_H

#include "alert.h"
#include "backlog.h"
#include "breaker.h"
#include "budget.h"
#include "bulkhead.h"
#include "clock.h"
#include "common.h"
#include "config.h"
#include "deadline.h"
#include "degrade.h"
#include "event.h"
#include "gauge.h"
#include "hedge.h"
#include "http.h"
#include "http_standard.h"
#include "limit.h"
#include "limiter.h"
#include "pipeline.h"
#include "queue.h"
#include "rand.h"
#include "ratelimit.h"
#include "registry.h"
#include "retry.h"
#include "stage.h"
#include "strategy.h"
#include "throttle.h"
#include "trace.h"

#endif /* BREAKWATER_H */
