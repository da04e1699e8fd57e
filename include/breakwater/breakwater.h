/* breakwater — umbrella header: everything public. */
#ifndef BREAKWATER_H
#define BREAKWATER_H

#include "breaker.h"
#include "clock.h"
#include "common.h"
#include "event.h"
#include "rand.h"
#include "registry.h"

#endif /* BREAKWATER_H */
