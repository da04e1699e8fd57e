/* `breakwater lab hedge`: hedging against a partner with a slow tail, in
 * virtual time — the same requests without and with a hedge policy
 * (bw_lab_hedge_run, lab.h), p50/p95/p99 and the extra calls it cost.
 * docs/lab.md, "Hedging", is the guide. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "lab_seeds.h"
#include "partner_flags.h"

#include "breakwater/lab.h"

#define HEDGE_MAX_FLAGS 24

typedef struct hopts_s {
  bw_lab_hedge_config_t cfg;
  int64_t seed;
  const char *seeds;
  int64_t hedge_delay_ms; /* given: a FIXED delay */
  double quantile;
  uint32_t max_hedges;
  char partner_help[BW_PARTNER_KNOB_FLAGS][96];
} hopts_t;

static void hopts_init(hopts_t *o) {
  memset(o, 0, sizeof *o);
  bw_lab_hedge_config_init(&o->cfg);
  o->seed = (int64_t)o->cfg.seed;
  o->hedge_delay_ms = 0;
  o->quantile = o->cfg.hedge.quantile;
  o->max_hedges = o->cfg.hedge.max_hedges;
}

static size_t hflags(bw_cli_flag_t *f, hopts_t *o) {
  size_t n = 0;
  bw_cli_flag_t own[] = {
      BW_CLI_U32("requests", &o->cfg.requests, 1, 10000000, "N",
                 "logical requests (default 10000)"),
      BW_CLI_DOUBLE("rate", &o->cfg.rate_per_s, 0.001, 1e6, "R",
                    "Poisson arrivals a second (default 100)"),
      BW_CLI_I64("timeout-ms", &o->cfg.timeout_ms, 1, BW_TOOL_DAY_MS, "MS",
                 "each copy's timeout (default 10000)"),
      BW_SEED_FLAG(&o->seed, "every random choice derives from it (default 4)"),
      BW_CLI_STRING("seeds", &o->seeds, "A..B",
                    "run every seed from A to B and summarise"),
      BW_CLI_I64("hedge-delay-ms", &o->hedge_delay_ms, 1, BW_TOOL_DAY_MS, "MS",
                 "a fixed hedge delay (default: the quantile of recent "
                 "latencies)"),
      BW_CLI_DOUBLE("hedge-quantile", &o->quantile, 0.01, 0.999, "Q",
                    "the delay's quantile of recent latencies (default 0.95)"),
      BW_CLI_U32("max-hedges", &o->max_hedges, 1, BW_HEDGE_MAX_HEDGES, "N",
                 "extra copies a request may send (default 1)"),
      BW_CLI_DOUBLE("budget-percent", &o->cfg.budget_percent, -1.0, 100.0, "P",
                    "hedges at most P % of requests, -1 = no budget "
                    "(default 10)"),
  };
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    f[n++] = own[i];
  n += bw_partner_knob_flags(f + n, &o->cfg.partner,
                             "partner: ", o->partner_help);
  return n;
}

void bw_cmd_lab_hedge_help(FILE *out) {
  bw_cli_flag_t flags[HEDGE_MAX_FLAGS];
  hopts_t o;
  hopts_init(&o);
  size_t n = hflags(flags, &o);
  fprintf(out,
          "usage: breakwater lab hedge [flags]\n\n"
          "Hedging in virtual time: the same requests against a partner with "
          "a slow\n"
          "tail (by default 5 %% of answers take 2000 ms), once without and "
          "once with\n"
          "a hedge (after the p95 of recent latencies with no answer, send "
          "a second\n"
          "copy; the first 200 wins; hedges capped at 10 %% of requests by a "
          "budget).\n"
          "Prints p50, p95, p99 and the extra calls; deterministic for a "
          "--seed.\n\n"
          "flags:\n");
  bw_cli_print_flags(out, flags, n);
}

#define MS(ns) ((double)(ns) / 1e6)

static void apply(hopts_t *o, uint64_t seed) {
  o->cfg.seed = seed;
  o->cfg.hedge.quantile = o->quantile;
  o->cfg.hedge.max_hedges = o->max_hedges;
  if (o->hedge_delay_ms > 0) {
    o->cfg.hedge.delay = BW_HEDGE_FIXED;
    o->cfg.hedge.delay_ms = o->hedge_delay_ms;
  }
}

static double extra_pct(const bw_sim_hedge_results_t *r) {
  return r->requests > 0 ? 100.0 * (double)r->hedges / (double)r->requests
                         : 0.0;
}

static double p99_ratio(const bw_lab_hedge_results_t *r) {
  return r->on.latency_p99_ns > 0
             ? (double)r->off.latency_p99_ns / (double)r->on.latency_p99_ns
             : 0.0;
}

static void row(const char *name, const bw_sim_hedge_results_t *r) {
  printf(
      "%-10s %9.1f %9.1f %9.1f %9.1f %10.3f %8.2f%%\n", name,
      MS(r->latency_p50_ns), MS(r->latency_p95_ns), MS(r->latency_p99_ns),
      MS(r->latency_max_ns),
      r->requests > 0 ? (double)r->network_calls / (double)r->requests : 0,
      r->requests > 0 ? 100.0 * (double)r->successes / (double)r->requests : 0);
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* The median of sorted v[0..n). */
static double median(const double *v, size_t n) {
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static int fail(const bw_error_t *err) {
  fprintf(stderr, "breakwater lab hedge: %s%s%s\n", err->field,
          err->field[0] != '\0' ? ": " : "", err->message);
  return err->code == BW_E_INVAL ? BW_CLI_EXIT_USAGE : 1;
}

int bw_cmd_lab_hedge(int argc, char **argv) {
  bw_cli_flag_t flags[HEDGE_MAX_FLAGS];
  hopts_t o;
  char msg[256];
  bw_error_t err;
  bw_lab_hedge_results_t r;
  hopts_init(&o);
  size_t n = hflags(flags, &o);
  int rc = bw_cli_parse(flags, n, argc, argv, NULL, 0, NULL, msg, sizeof msg);
  if (rc == BW_CLI_HELP) {
    bw_cmd_lab_hedge_help(stdout);
    return 0;
  }
  if (rc != BW_CLI_OK) {
    fprintf(stderr, "breakwater lab hedge: %s\n", msg);
    fprintf(stderr, "Run 'breakwater lab hedge --help' for the flags.\n");
    return BW_CLI_EXIT_USAGE;
  }
  if (o.seeds == NULL) {
    apply(&o, (uint64_t)o.seed);
    if (bw_lab_hedge_run(&o.cfg, &r, &err) != BW_OK) return fail(&err);
    printf(
        "hedging in virtual time: %u requests, Poisson %g/s, partner tail "
        "%g%% at %lld ms, seed %" PRIu64 "\n",
        (unsigned)o.cfg.requests, o.cfg.rate_per_s,
        100.0 * o.cfg.partner.tail_ratio, (long long)o.cfg.partner.tail_ms,
        o.cfg.seed);
    printf("%-10s %9s %9s %9s %9s %10s %9s\n", "", "p50 ms", "p95 ms", "p99 ms",
           "max ms", "calls/req", "success");
    row("no hedge", &r.off);
    row("hedged", &r.on);
    printf("hedges: %" PRIu64 " (%.2f%% extra calls), %" PRIu64 " won, %" PRIu64
           " refused by the budget; delay %s, %lld ms at "
           "the end\n",
           r.on.hedges, extra_pct(&r.on), r.on.hedge_wins, r.on.hedges_denied,
           o.cfg.hedge.delay == BW_HEDGE_FIXED ? "fixed" : "quantile",
           (long long)r.final_delay_ms);
    printf("p99 %.1f ms -> %.1f ms: %.2fx lower for %.2f%% extra calls\n",
           MS(r.off.latency_p99_ns), MS(r.on.latency_p99_ns), p99_ratio(&r),
           extra_pct(&r.on));
    return 0;
  }
  uint64_t first, last;
  if (bw_lab_seeds_parse(o.seeds, &first, &last, msg, sizeof msg) != 0) {
    fprintf(stderr, "breakwater lab hedge: %s\n", msg);
    return BW_CLI_EXIT_USAGE;
  }
  size_t count = (size_t)(last - first + 1);
  double *ratio = malloc(count * sizeof *ratio);
  double *extra = malloc(count * sizeof *extra);
  if (ratio == NULL || extra == NULL) {
    free(ratio);
    free(extra);
    fprintf(stderr, "breakwater lab hedge: out of memory\n");
    return 1;
  }
  printf("%-6s %12s %12s %8s %8s\n", "seed", "p99 no hedge", "p99 hedged",
         "ratio", "extra");
  for (size_t i = 0; i < count; i++) {
    apply(&o, first + i);
    if (bw_lab_hedge_run(&o.cfg, &r, &err) != BW_OK) {
      free(ratio);
      free(extra);
      return fail(&err);
    }
    ratio[i] = p99_ratio(&r);
    extra[i] = extra_pct(&r.on);
    printf("%-6" PRIu64 " %9.1f ms %9.1f ms %7.2fx %7.2f%%\n", first + i,
           MS(r.off.latency_p99_ns), MS(r.on.latency_p99_ns), ratio[i],
           extra[i]);
  }
  qsort(ratio, count, sizeof *ratio, cmp_double);
  qsort(extra, count, sizeof *extra, cmp_double);
  printf(
      "over %zu seeds: p99 ratio lowest %.2fx, median %.2fx; extra calls "
      "median %.2f%%, highest %.2f%%\n",
      count, ratio[0], median(ratio, count), median(extra, count),
      extra[count - 1]);
  free(ratio);
  free(extra);
  return 0;
}
