/* breakwater — umbrella header: everything public. */
#ifndef BREAKWATER_H
#define BREAKWATER_H

#include "breaker.h"
#include "budget.h"
#include "clock.h"
#include "common.h"
#include "event.h"
#include "rand.h"
#include "ratelimit.h"
#include "registry.h"

#endif /* BREAKWATER_H */
