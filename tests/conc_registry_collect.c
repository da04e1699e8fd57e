/* Concurrency: scrapes of one registry on several threads while another
 * thread adds and removes collectors.
 *
 * Laws checked:
 *   removal:  a collector is never called after bw_registry_remove_collector
 *             returned (its `removed` flag is set right after; a call that
 *             sees it set is a violation): zero violations.
 *   calls:    every call of a collector happened inside an exposition, so
 *             the calls of all collectors = the sum, over expositions, of
 *             the collectors each exposition wrote (counted from its text:
 *             the breakwater_registry_collector_up samples).
 *   text:     every exposition has one HELP line for the shared family at
 *             most, and as many of its samples as it has collectors up. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"

#define SCRAPERS 3
#define SCRAPES 300 /* per scraper */
#define SLOTS 4     /* collectors the mutator cycles through */
#define CYCLES 400  /* put + remove per slot */

typedef struct slot_s {
  char name[16];
  atomic_long calls;
  atomic_bool removed;
  atomic_long violations;
} slot_t;

typedef struct shared_s {
  bw_registry_t *reg;
  slot_t slots[SLOTS + 1]; /* the last one is never removed */
  atomic_long written;     /* collectors written, over all expositions */
  atomic_long bad_text;
  atomic_bool stop;
} shared_t;

static int slot_collect(void *obj, bw_metric_emit_fn emit, void *ctx) {
  slot_t *s = obj;
  bw_metric_sample_t m;
  if (atomic_load(&s->removed)) atomic_fetch_add(&s->violations, 1);
  atomic_fetch_add(&s->calls, 1);
  memset(&m, 0, sizeof(m));
  m.family = "conc_calls_total";
  m.type = BW_METRIC_COUNTER;
  m.help = "Calls of the collector.";
  m.value = 1;
  return emit(ctx, &m, NULL);
}

static long count(const char *text, const char *needle) {
  long n = 0;
  const char *p = text;
  while ((p = strstr(p, needle)) != NULL) {
    n++;
    p += strlen(needle);
  }
  return n;
}

static void *scraper(void *arg) {
  shared_t *sh = arg;
  int i;
  for (i = 0; i < SCRAPES; i++) {
    char *text = bw_registry_prometheus(sh->reg, NULL);
    long up, samples, heads;
    if (text == NULL) {
      atomic_fetch_add(&sh->bad_text, 1);
      continue;
    }
    up = count(text, "breakwater_registry_collector_up{");
    samples = count(text, "\nconc_calls_total{");
    heads = count(text, "# HELP conc_calls_total ");
    if (samples != up || heads != (up > 0 ? 1 : 0))
      atomic_fetch_add(&sh->bad_text, 1);
    atomic_fetch_add(&sh->written, up);
    bw_free(text);
  }
  return NULL;
}

static void *mutator(void *arg) {
  shared_t *sh = arg;
  int c, k;
  for (c = 0; c < CYCLES; c++)
    for (k = 0; k < SLOTS; k++) {
      slot_t *s = &sh->slots[k];
      atomic_store(&s->removed, false);
      assert_int_equal(
          bw_registry_put_collector(sh->reg, s->name, slot_collect, s, NULL),
          BW_OK);
      assert_int_equal(bw_registry_remove_collector(sh->reg, s->name), BW_OK);
      atomic_store(&s->removed, true);
    }
  return NULL;
}

static void test_scrapes_race_put_and_remove(void **state) {
  shared_t sh;
  pthread_t th[SCRAPERS + 1];
  long calls = 0, violations = 0;
  int i;
  (void)state;
  memset(&sh, 0, sizeof(sh));
  sh.reg = bw_registry_new(NULL, NULL);
  assert_non_null(sh.reg);
  for (i = 0; i <= SLOTS; i++) {
    snprintf(sh.slots[i].name, sizeof(sh.slots[i].name), "slot%d", i);
    atomic_init(&sh.slots[i].removed, true);
  }
  /* One collector stays throughout, so every exposition has one. */
  atomic_store(&sh.slots[SLOTS].removed, false);
  assert_int_equal(bw_registry_put_collector(sh.reg, "steady", slot_collect,
                                             &sh.slots[SLOTS], NULL),
                   BW_OK);
  for (i = 0; i < SCRAPERS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, scraper, &sh), 0);
  assert_int_equal(pthread_create(&th[SCRAPERS], NULL, mutator, &sh), 0);
  for (i = 0; i <= SCRAPERS; i++)
    pthread_join(th[i], NULL);
  for (i = 0; i <= SLOTS; i++) {
    calls += atomic_load(&sh.slots[i].calls);
    violations += atomic_load(&sh.slots[i].violations);
  }
  assert_int_equal(atomic_load(&sh.bad_text), 0);
  assert_int_equal(violations, 0);
  assert_int_equal(calls, atomic_load(&sh.written));
  assert_int_equal(bw_registry_collector_count(sh.reg), 1);
  bw_registry_free(sh.reg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scrapes_race_put_and_remove),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
