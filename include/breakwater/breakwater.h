/* breakwater — umbrella header: everything public. */
#ifndef BREAKWATER_H
#define BREAKWATER_H

#include "breaker.h"
#include "budget.h"
#include "clock.h"
#include "common.h"
#include "deadline.h"
#include "event.h"
#include "http.h"
#include "rand.h"
#include "ratelimit.h"
#include "registry.h"
#include "retry.h"

#endif /* BREAKWATER_H */
