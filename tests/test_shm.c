/* Specification tests: state in shared memory (include/breakwater/shm.h).
 *
 * Segments: create / attach / unlink, mode 0600, and bad input (a missing
 * segment, a corrupt header, a name too long, bad configurations, a second
 * process's differing configuration) answered with errors that name what is
 * wrong; who may attach (owner and mode; the allow_group opt-in — the tests
 * that chown or change user need root, as CI runs, and skip otherwise); a
 * segment truncated before an attach, or under a live handle. Objects: the
 * shared breaker's rules (consecutive, time window), break growth, half-open
 * probe LEASES that expire, stale generations; the token-bucket budget's
 * arithmetic; the concurrency limit's slot leases. Everything runs in one
 * process on a manual clock and is exact; the multi-process behaviour (fork,
 * SIGKILL) is in conc_shm.c. Two handles on one segment stand for two processes
 * here: they share nothing but the segment. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "breakwater/shm.h"
#include "breaker_pipeline.h"
#include "bw_test.h"
#include "oom.h"
#include "shm_test.h"

#define MS BW_NS_PER_MS

typedef struct env_s {
  char name[64];
  bw_clock_t *clock;
  bw_clock_t *wall;
  bwt_recorder_t *rec;
  bw_sink_t *sink;
  bw_shm_t *seg;
  bw_shm_t *seg2; /* a second handle: "another process" */
  bw_shm_breaker_t *b;
  bw_shm_breaker_t *b2;
  bw_shm_budget_t *bud;
  bw_shm_budget_t *bud2;
  bw_shm_limit_t *lim;
} env_t;

static int setup(void **state) {
  bw_error_t err;
  env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  bwt_shm_fresh_name(e->name, sizeof(e->name), "bw_test_shm");
  e->clock = bw_clock_manual_new(BWT_T0_NS);
  e->wall = bw_clock_manual_new(BWT_WALL0_NS);
  e->rec = calloc(1, sizeof(*e->rec));
  if (e->clock == NULL || e->wall == NULL || e->rec == NULL) return -1;
  e->sink = bw_sink_callback_new(bwt_record_cb, e->rec, &err);
  e->seg = bwt_shm_open(e->name, BW_SHM_CREATE);
  if (e->seg == NULL) return -1;
  e->seg2 = bwt_shm_open(e->name, BW_SHM_ATTACH);
  if (e->seg2 == NULL) return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env_t *e = *state;
  bw_shm_breaker_free(e->b);
  bw_shm_breaker_free(e->b2);
  bw_shm_budget_free(e->bud);
  bw_shm_budget_free(e->bud2);
  bw_shm_limit_free(e->lim);
  bw_shm_close(e->seg);
  bw_shm_close(e->seg2);
  bw_shm_unlink(e->name, NULL);
  bw_sink_free(e->sink);
  bw_clock_free(e->clock);
  bw_clock_free(e->wall);
  free(e->rec);
  free(e);
  return 0;
}

static void advance_ms(env_t *e, int64_t ms) {
  bw_clock_manual_advance(e->clock, ms * MS);
  bw_clock_manual_advance(e->wall, ms * MS);
}

static void brk_config(env_t *e, bw_breaker_config_t *cfg) {
  bw_breaker_config_init(cfg);
  cfg->name = "payments";
  cfg->failure_threshold = 3;
  cfg->break_ms = 1000;
  cfg->half_open_timeout_ms = 500;
  cfg->clock = e->clock;
  cfg->wall_clock = e->wall;
  cfg->sink = e->sink;
}

static bw_shm_breaker_t *mk_brk(bw_shm_t *seg, const bw_breaker_config_t *cfg) {
  bw_error_t err;
  bw_shm_breaker_t *b = bw_shm_breaker_new(seg, cfg, &err);
  if (b == NULL)
    fail_msg("bw_shm_breaker_new: [%s] %s", err.field, err.message);
  return b;
}

static bw_permit_t take(bw_shm_breaker_t *b) {
  bw_permit_t p;
  memset(&p, 0xCD, sizeof(p));
  assert_status(bw_shm_breaker_acquire(b, &p), BW_OK);
  return p;
}

static void call(bw_shm_breaker_t *b, bw_outcome_t o) {
  bw_permit_t p = take(b);
  assert_status(bw_shm_breaker_release(b, &p, o), BW_OK);
}

static void rejected(bw_shm_breaker_t *b) {
  bw_permit_t p;
  assert_status(bw_shm_breaker_acquire(b, &p), BW_E_OPEN);
}

static bw_breaker_stats_t bstats(const bw_shm_breaker_t *b) {
  bw_breaker_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  bw_shm_breaker_stats(b, &s);
  return s;
}

/* ==== segments ============================================================ */

static void create_is_mode_0600_and_attach_sees_the_same_objects(void **st) {
  env_t *e = *st;
  char path[128];
  struct stat sb;
  bw_shm_stats_t s1, s2;
  bw_breaker_config_t cfg;
  snprintf(path, sizeof(path), "/dev/shm%s", e->name);
  assert_int_equal(stat(path, &sb), 0);
  assert_u64_eq(sb.st_mode & 0777, 0600);
  assert_string_equal(bw_shm_name(e->seg), e->name);
  brk_config(e, &cfg);
  e->b = mk_brk(e->seg, &cfg);
  bw_shm_stats(e->seg, &s1);
  bw_shm_stats(e->seg2, &s2);
  assert_true(s1.created);
  assert_false(s2.created);
  assert_u64_eq(s1.size, (size_t)1 << 20); /* the default */
  assert_u64_eq(s2.size, s1.size);
  assert_u64_eq(s1.objects, 1);
  assert_u64_eq(s2.objects, 1);
  assert_u64_eq(s2.used, s1.used);
  assert_true(s1.used > 0 && s1.used < s1.size);
}

static void a_name_without_slash_gets_one_and_unlink_removes_it(void **st) {
  env_t *e = *st;
  bw_shm_config_t sc;
  bw_error_t err;
  bw_shm_t *s;
  char bare[64];
  snprintf(bare, sizeof(bare), "%s_bare", e->name + 1);
  bw_shm_config_init(&sc);
  sc.name = bare;
  sc.mode = BW_SHM_OPEN_OR_CREATE;
  s = bw_shm_open(&sc, &err);
  assert_non_null(s);
  assert_true(bw_shm_name(s)[0] == '/');
  assert_string_equal(bw_shm_name(s) + 1, bare);
  bw_shm_close(s);
  assert_status(bw_shm_unlink(bare, &err), BW_OK);
  bwt_prefill_error(&err);
  assert_status(bw_shm_unlink(bare, &err), BW_E_NOTFOUND);
  assert_contains(err.message, bare);
}

static void attaching_a_missing_segment_is_notfound_naming_it(void **st) {
  env_t *e = *st;
  bw_shm_config_t sc;
  bw_error_t err;
  char missing[80];
  (void)e;
  snprintf(missing, sizeof(missing), "/bw_test_shm_missing_%ld",
           (long)getpid());
  bw_shm_config_init(&sc);
  sc.name = missing;
  sc.mode = BW_SHM_ATTACH;
  bwt_prefill_error(&err);
  assert_null(bw_shm_open(&sc, &err));
  assert_status(err.code, BW_E_NOTFOUND);
  assert_string_equal(err.field, "name");
  assert_contains(err.message, missing);
  assert_contains(err.message, "does not exist");
}

static void creating_an_existing_segment_is_refused(void **st) {
  env_t *e = *st;
  bw_shm_config_t sc;
  bw_error_t err;
  bw_shm_config_init(&sc);
  sc.name = e->name;
  sc.mode = BW_SHM_CREATE;
  bwt_prefill_error(&err);
  assert_null(bw_shm_open(&sc, &err));
  assert_true(bwt_error_names(&err, "name"));
  assert_contains(err.message, "already exists");
  assert_contains(err.message, e->name);
}

/* Writes `len` bytes at `off` into the segment through a raw mapping. */
static void scribble(const char *name, size_t off, const void *bytes,
                     size_t len) {
  int fd = shm_open(name, O_RDWR, 0);
  unsigned char *p;
  assert_true(fd >= 0);
  p = mmap(NULL, off + len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  assert_true(p != MAP_FAILED);
  memcpy(p + off, bytes, len);
  munmap(p, off + len);
}

static bw_shm_t *attach(const char *name, bw_error_t *err) {
  bw_shm_config_t sc;
  bw_shm_config_init(&sc);
  sc.name = name;
  sc.mode = BW_SHM_ATTACH;
  bwt_prefill_error(err);
  return bw_shm_open(&sc, err);
}

static void a_corrupt_header_is_refused_naming_what_differs(void **st) {
  env_t *e = *st;
  bw_error_t err;
  unsigned char garbage[16];
  uint64_t magic;
  uint32_t version = 99;
  memset(garbage, 0x5A, sizeof(garbage));
  /* Keep the good magic to restore it. */
  {
    int fd = shm_open(e->name, O_RDONLY, 0);
    assert_true(pread(fd, &magic, sizeof(magic), 0) == (ssize_t)sizeof(magic));
    close(fd);
  }
  scribble(e->name, 0, garbage, sizeof(garbage));
  assert_null(attach(e->name, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_contains(err.message, "not a breakwater segment");
  assert_contains(err.message, e->name);
  assert_contains(err.message, "0x5a5a5a5a5a5a5a5a");
  /* Good magic, another layout version. */
  scribble(e->name, 0, &magic, sizeof(magic));
  scribble(e->name, 8, &version, sizeof(version));
  assert_null(attach(e->name, &err));
  assert_true(bwt_error_names(&err, "version"));
  assert_contains(err.message, "99");
}

static void a_segment_that_is_not_breakwaters_is_refused(void **st) {
  env_t *e = *st;
  bw_error_t err;
  char other[80];
  bw_shm_t *s;
  int fd;
  (void)e;
  snprintf(other, sizeof(other), "/bw_test_shm_other_%ld", (long)getpid());
  shm_unlink(other);
  fd = shm_open(other, O_RDWR | O_CREAT | O_EXCL, 0600);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, 100), 0);
  close(fd);
  s = attach(other, &err);
  shm_unlink(other); /* before asserting: never leave it behind */
  assert_null(s);
  assert_true(bwt_error_names(&err, "size"));
  assert_contains(err.message, "too small");
  assert_contains(err.message, other);
}

/* ==== who may attach, and a segment's size =============================== */

#define NOBODY 65534 /* another user and group (nobody, nogroup) */

/* Sets a segment's owner (-1: unchanged) and mode through a raw descriptor,
 * as its other user (or a careless script) would. */
static void set_owner_mode(const char *name, uid_t uid, gid_t gid,
                           mode_t mode) {
  int fd = shm_open(name, O_RDWR, 0);
  assert_true(fd >= 0);
  assert_int_equal(fchown(fd, uid, gid), 0);
  assert_int_equal(fchmod(fd, mode), 0);
  close(fd);
}

static bw_shm_t *open_group(const char *name, bw_shm_mode_t mode, gid_t group,
                            bw_error_t *err) {
  bw_shm_config_t sc;
  bw_shm_config_init(&sc);
  sc.name = name;
  sc.mode = mode;
  sc.allow_group = true;
  sc.group = group;
  bwt_prefill_error(err);
  return bw_shm_open(&sc, err);
}

/* The refusal without allow_group, exactly. */
static void refused_as_untrusted(const bw_error_t *err, const char *name,
                                 unsigned long uid, unsigned long gid,
                                 unsigned mode) {
  char want[512];
  snprintf(want, sizeof(want),
           "shared-memory segment %s has owner uid %lu, group %lu, mode "
           "0%03o: refused, it must be euid %lu's and at most 0600 "
           "(allow_group and group share it with a group)",
           name, uid, gid, mode, (unsigned long)geteuid());
  assert_status(err->code, BW_E_INVAL);
  assert_string_equal(err->field, "name");
  assert_string_equal(err->message, want);
}

/* The refusal with allow_group, exactly. */
static void refused_for_the_group(const bw_error_t *err, const char *name,
                                  unsigned long uid, unsigned long gid,
                                  unsigned mode, unsigned long group) {
  char want[512];
  snprintf(want, sizeof(want),
           "shared-memory segment %s has owner uid %lu, group %lu, mode "
           "0%03o: refused, with allow_group it must be euid %lu's and at "
           "most 0600, or group %lu's and at most 0660",
           name, uid, gid, mode, (unsigned long)geteuid(), group);
  assert_status(err->code, BW_E_INVAL);
  assert_string_equal(err->field, "group");
  assert_string_equal(err->message, want);
}

static void a_segment_others_can_open_is_refused_naming_owner_and_mode(
    void **st) {
  env_t *e = *st;
  bw_error_t err;
  bw_shm_config_t sc;
  char other[80];
  bw_shm_t *s;
  int fd;
  /* this library's segment, opened up to everyone afterwards */
  set_owner_mode(e->name, (uid_t)-1, (gid_t)-1, 0666);
  assert_null(attach(e->name, &err));
  refused_as_untrusted(&err, e->name, geteuid(), getegid(), 0666);
  /* readable by the group is wider than 0600 too */
  set_owner_mode(e->name, (uid_t)-1, (gid_t)-1, 0640);
  assert_null(attach(e->name, &err));
  refused_as_untrusted(&err, e->name, geteuid(), getegid(), 0640);
  set_owner_mode(e->name, (uid_t)-1, (gid_t)-1, 0600);
  s = attach(e->name, &err);
  assert_non_null(s);
  bw_shm_close(s);
  /* a name taken in advance with mode 0666 (the attack): OPEN_OR_CREATE
   * finds it and must not attach, whatever it holds */
  snprintf(other, sizeof(other), "/bw_test_shm_0666_%ld", (long)getpid());
  shm_unlink(other);
  fd = shm_open(other, O_RDWR | O_CREAT | O_EXCL, 0666);
  assert_true(fd >= 0);
  assert_int_equal(fchmod(fd, 0666), 0); /* whatever the umask */
  assert_int_equal(ftruncate(fd, (off_t)1 << 20), 0);
  close(fd);
  bw_shm_config_init(&sc);
  sc.name = other;
  bwt_prefill_error(&err);
  s = bw_shm_open(&sc, &err);
  shm_unlink(other); /* before asserting: never leave it behind */
  assert_null(s);
  refused_as_untrusted(&err, other, geteuid(), getegid(), 0666);
}

static void a_segment_owned_by_another_user_is_refused(void **st) {
  env_t *e = *st;
  bw_error_t err;
  if (geteuid() != 0) skip(); /* chown needs root (CI runs as root) */
  set_owner_mode(e->name, NOBODY, (gid_t)-1, 0600);
  assert_null(attach(e->name, &err));
  refused_as_untrusted(&err, e->name, NOBODY, getegid(), 0600);
  /* allow_group trusts the named group, not any other user */
  assert_null(open_group(e->name, BW_SHM_ATTACH, NOBODY, &err));
  refused_for_the_group(&err, e->name, NOBODY, getegid(), 0600, NOBODY);
}

static void a_group_segment_needs_the_opt_in_and_its_group(void **st) {
  env_t *e = *st;
  bw_error_t err;
  char name[64], path[128];
  struct stat sb;
  bw_shm_t *mine, *theirs;
  bw_shm_budget_t *b1, *b2;
  bw_budget_config_t bc;
  bw_shm_stats_t ss;
  (void)e;
  if (geteuid() != 0) skip(); /* a group root is not in, and chown */
  bwt_shm_fresh_name(name, sizeof(name), "bw_test_shm_group");
  mine = open_group(name, BW_SHM_CREATE, NOBODY, &err);
  if (mine == NULL) fail_msg("[%s] %s", err.field, err.message);
  snprintf(path, sizeof(path), "/dev/shm%s", name);
  assert_int_equal(stat(path, &sb), 0);
  assert_u64_eq(sb.st_mode & 07777, 0660);
  assert_u64_eq(sb.st_gid, NOBODY);
  assert_u64_eq(sb.st_uid, geteuid());
  /* without the opt-in, 0660 is too wide */
  assert_null(attach(name, &err));
  refused_as_untrusted(&err, name, geteuid(), NOBODY, 0660);
  /* with it and the same group: one segment */
  theirs = open_group(name, BW_SHM_ATTACH, NOBODY, &err);
  assert_non_null(theirs);
  bw_budget_config_init(&bc);
  bc.kind = BW_BUDGET_TOKEN_BUCKET;
  bc.name = "shared";
  b1 = bw_shm_budget_new(mine, &bc, &err);
  assert_non_null(b1);
  b2 = bw_shm_budget_new(theirs, &bc, &err);
  assert_non_null(b2);
  bw_shm_stats(theirs, &ss);
  assert_u64_eq(ss.objects, 1);
  bw_shm_budget_free(b2);
  bw_shm_budget_free(b1);
  bw_shm_close(theirs);
  /* another group is refused, naming the field group */
  assert_null(open_group(name, BW_SHM_ATTACH, NOBODY - 1, &err));
  refused_for_the_group(&err, name, geteuid(), NOBODY, 0660, NOBODY - 1);
  /* made by another member of the group: trusted with the opt-in only */
  set_owner_mode(name, NOBODY, (gid_t)-1, 0660);
  theirs = open_group(name, BW_SHM_ATTACH, NOBODY, &err);
  assert_non_null(theirs);
  bw_shm_close(theirs);
  assert_null(attach(name, &err));
  refused_as_untrusted(&err, name, NOBODY, NOBODY, 0660);
  /* open to everyone: never */
  set_owner_mode(name, (uid_t)-1, (gid_t)-1, 0666);
  assert_null(open_group(name, BW_SHM_ATTACH, NOBODY, &err));
  refused_for_the_group(&err, name, NOBODY, NOBODY, 0666, NOBODY);
  bw_shm_close(mine);
  bw_shm_unlink(name, NULL);
}

static void group_needs_allow_group_and_a_group_id(void **st) {
  env_t *e = *st;
  bw_shm_config_t sc;
  bw_error_t err;
  bw_shm_config_init(&sc);
  assert_false(sc.allow_group);
  assert_u64_eq(sc.group, 0);
  sc.name = e->name;
  sc.group = 5;
  bwt_prefill_error(&err);
  assert_null(bw_shm_open(&sc, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "group");
  assert_string_equal(err.message,
                      "group is used only with allow_group (got group 5 and "
                      "allow_group false): set allow_group to share the "
                      "segment with the group, or leave group 0");
  sc.allow_group = true;
  sc.group = (gid_t)-1;
  bwt_prefill_error(&err);
  assert_null(bw_shm_open(&sc, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "group");
  assert_string_equal(err.message,
                      "group must be a group id, not (gid_t)-1, when "
                      "allow_group is set");
}

/* A creator that is not in the group cannot give it the segment: refused,
 * naming group, and nothing is left under the name. */
static void a_creator_outside_the_group_is_refused_naming_group(void **st) {
  env_t *e = *st;
  char name[64];
  pid_t pid;
  int status, fd;
  (void)e;
  if (geteuid() != 0) skip(); /* to become another user */
  bwt_shm_fresh_name(name, sizeof(name), "bw_test_shm_outsider");
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    bw_error_t err;
    char want[256];
    if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0) _exit(10);
    if (open_group(name, BW_SHM_CREATE, 12345, &err) != NULL) _exit(11);
    snprintf(want, sizeof(want),
             "cannot give shared-memory segment %s to group 12345: %s (the "
             "creator must be in the group, or root)",
             name, strerror(EPERM));
    if (err.code != BW_E_INVAL) _exit(12);
    if (strcmp(err.field, "group") != 0) _exit(13);
    if (strcmp(err.message, want) != 0) _exit(14);
    _exit(0);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  fd = shm_open(name, O_RDONLY, 0);
  if (fd >= 0) close(fd);
  assert_int_equal(fd, -1);
}

static void a_truncated_segment_is_refused_on_attach(void **st) {
  env_t *e = *st;
  bw_error_t err;
  char want[400];
  int fd = shm_open(e->name, O_RDWR, 0);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, 64 * 1024), 0);
  close(fd);
  assert_null(attach(e->name, &err));
  snprintf(want, sizeof(want),
           "shared-memory segment %s says it is 1048576 bytes but is 65536 "
           "bytes (resized since its creation: processes mapping it get "
           "SIGBUS past the end; unlink it and create it again)",
           e->name);
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "size");
  assert_string_equal(err.message, want);
}

/* Truncated to nothing under a live handle: the header itself is gone, and
 * the first read of it would be SIGBUS. Object creation checks first. */
static void a_segment_truncated_while_mapped_is_refused_at_object_creation(
    void **st) {
  env_t *e = *st;
  bw_error_t err;
  bw_breaker_config_t cfg;
  bw_budget_config_t bc;
  bw_shm_limit_config_t lc;
  char want[400];
  int fd = shm_open(e->name, O_RDWR, 0);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, 0), 0);
  close(fd);
  snprintf(want, sizeof(want),
           "shared-memory segment %s is 0 bytes but 1048576 were mapped "
           "(resized while mapped: SIGBUS past the new end); unlink it and "
           "create it again",
           e->name);
  brk_config(e, &cfg);
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(e->seg2, &cfg, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "size");
  assert_string_equal(err.message, want);
  bw_budget_config_init(&bc);
  bc.kind = BW_BUDGET_TOKEN_BUCKET;
  bc.name = "retries";
  bwt_prefill_error(&err);
  assert_null(bw_shm_budget_new(e->seg, &bc, &err));
  assert_string_equal(err.field, "size");
  assert_string_equal(err.message, want);
  bw_shm_limit_config_init(&lc);
  lc.name = "slots";
  bwt_prefill_error(&err);
  assert_null(bw_shm_limit_new(e->seg, &lc, &err));
  assert_string_equal(err.field, "size");
  assert_string_equal(err.message, want);
}

static void names_too_long_or_malformed_are_refused(void **st) {
  env_t *e = *st;
  char longname[BW_NAME_MAX + 2];
  bw_shm_config_t sc;
  bw_breaker_config_t cfg;
  bw_error_t err;
  memset(longname, 'x', sizeof(longname) - 1);
  longname[sizeof(longname) - 1] = '\0'; /* BW_NAME_MAX + 1 bytes */
  bw_shm_config_init(&sc);
  sc.name = longname;
  bwt_prefill_error(&err);
  assert_null(bw_shm_open(&sc, &err));
  assert_true(bwt_error_names(&err, "name"));
  assert_contains(err.message, "at most 200 bytes");
  sc.name = "/a/b";
  bwt_prefill_error(&err);
  assert_null(bw_shm_open(&sc, &err));
  assert_true(bwt_error_names(&err, "name"));
  assert_contains(err.message, "'/'");
  sc.name = NULL;
  bwt_prefill_error(&err);
  assert_null(bw_shm_open(&sc, &err));
  assert_true(bwt_error_names(&err, "name"));
  /* An object's name too long. */
  brk_config(e, &cfg);
  cfg.name = longname;
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(e->seg, &cfg, &err));
  assert_true(bwt_error_names(&err, "name"));
}

static void bad_configurations_are_refused_naming_the_field(void **st) {
  env_t *e = *st;
  bw_shm_config_t sc;
  bw_breaker_config_t cfg;
  bw_budget_config_t bc;
  bw_shm_limit_config_t lc;
  bw_error_t err;
  bw_shm_config_init(&sc);
  sc.name = "/bw_test_never_made";
  sc.size = 1000;
  bwt_prefill_error(&err);
  assert_null(bw_shm_open(&sc, &err));
  assert_true(bwt_error_names(&err, "size"));
  sc.size = (size_t)1 << 20;
  sc.mode = (bw_shm_mode_t)7;
  bwt_prefill_error(&err);
  assert_null(bw_shm_open(&sc, &err));
  assert_true(bwt_error_names(&err, "mode"));

  brk_config(e, &cfg);
  cfg.trip_rule = BW_TRIP_COUNT_WINDOW;
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(e->seg, &cfg, &err));
  assert_true(bwt_error_names(&err, "trip_rule"));
  assert_contains(err.message, "not supported by the shared-memory breaker");
  brk_config(e, &cfg);
  cfg.trip_rule = BW_TRIP_TIME_WINDOW;
  cfg.slow_call_ms = 100;
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(e->seg, &cfg, &err));
  assert_true(bwt_error_names(&err, "slow_call_ms"));
  brk_config(e, &cfg);
  cfg.metrics_only = true;
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(e->seg, &cfg, &err));
  assert_true(bwt_error_names(&err, "metrics_only"));
  brk_config(e, &cfg);
  cfg.half_open_max_calls = 65;
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(e->seg, &cfg, &err));
  assert_true(bwt_error_names(&err, "half_open_max_calls"));
  brk_config(e, &cfg);
  cfg.failure_threshold = 0; /* the core's own rule */
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(e->seg, &cfg, &err));
  assert_true(bwt_error_names(&err, "failure_threshold"));
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(NULL, &cfg, &err));
  assert_true(bwt_error_names(&err, "shm"));

  bw_budget_config_init(&bc);
  bc.kind = BW_BUDGET_RATIO;
  bwt_prefill_error(&err);
  assert_null(bw_shm_budget_new(e->seg, &bc, &err));
  assert_true(bwt_error_names(&err, "kind"));
  bw_budget_config_init(&bc);
  bc.token_ratio = 0.0001;
  bwt_prefill_error(&err);
  assert_null(bw_shm_budget_new(e->seg, &bc, &err));
  assert_true(bwt_error_names(&err, "token_ratio"));

  bw_shm_limit_config_init(&lc);
  lc.name = "lim";
  lc.max_concurrent = 0;
  bwt_prefill_error(&err);
  assert_null(bw_shm_limit_new(e->seg, &lc, &err));
  assert_true(bwt_error_names(&err, "max_concurrent"));
  lc.max_concurrent = BW_SHM_LIMIT_MAX + 1;
  bwt_prefill_error(&err);
  assert_null(bw_shm_limit_new(e->seg, &lc, &err));
  assert_true(bwt_error_names(&err, "max_concurrent"));
  lc.max_concurrent = 2;
  lc.lease_ms = 0;
  bwt_prefill_error(&err);
  assert_null(bw_shm_limit_new(e->seg, &lc, &err));
  assert_true(bwt_error_names(&err, "lease_ms"));
  /* Nothing was created by any refused call. */
  {
    bw_shm_stats_t s;
    bw_shm_stats(e->seg, &s);
    assert_u64_eq(s.objects, 0);
  }
}

static void attaching_with_a_different_config_is_refused(void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  bw_budget_config_t bc;
  bw_shm_limit_config_t lc;
  bw_error_t err;
  brk_config(e, &cfg);
  e->b = mk_brk(e->seg, &cfg);
  cfg.failure_threshold = 4;
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(e->seg2, &cfg, &err));
  assert_true(bwt_error_names(&err, "failure_threshold"));
  assert_contains(err.message, "created with failure_threshold 3");
  assert_contains(err.message, "has 4");
  brk_config(e, &cfg);
  cfg.break_ms = 2000;
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(e->seg2, &cfg, &err));
  assert_true(bwt_error_names(&err, "break_ms"));
  brk_config(e, &cfg);
  cfg.trip_rule = BW_TRIP_TIME_WINDOW;
  bwt_prefill_error(&err);
  assert_null(bw_shm_breaker_new(e->seg2, &cfg, &err));
  assert_true(bwt_error_names(&err, "trip_rule"));
  /* The same configuration (the clock and sink are each process's own)
   * attaches. */
  brk_config(e, &cfg);
  cfg.sink = NULL;
  e->b2 = mk_brk(e->seg2, &cfg);

  bw_budget_config_init(&bc);
  bc.name = "retries";
  bwt_prefill_error(&err);
  e->bud = bw_shm_budget_new(e->seg, &bc, &err);
  assert_non_null(e->bud);
  bc.max_tokens = 20;
  bwt_prefill_error(&err);
  assert_null(bw_shm_budget_new(e->seg2, &bc, &err));
  assert_true(bwt_error_names(&err, "max_tokens"));
  bc.max_tokens = 10;
  bc.token_ratio = 0.2;
  bwt_prefill_error(&err);
  assert_null(bw_shm_budget_new(e->seg2, &bc, &err));
  assert_true(bwt_error_names(&err, "token_ratio"));

  bw_shm_limit_config_init(&lc);
  lc.name = "slots";
  lc.max_concurrent = 2;
  e->lim = bw_shm_limit_new(e->seg, &lc, &err);
  assert_non_null(e->lim);
  lc.max_concurrent = 3;
  bwt_prefill_error(&err);
  assert_null(bw_shm_limit_new(e->seg2, &lc, &err));
  assert_true(bwt_error_names(&err, "max_concurrent"));
  lc.max_concurrent = 2;
  lc.lease_ms = 1;
  bwt_prefill_error(&err);
  assert_null(bw_shm_limit_new(e->seg2, &lc, &err));
  assert_true(bwt_error_names(&err, "lease_ms"));
}

static void a_name_of_another_kind_is_refused(void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  bw_budget_config_t bc;
  bw_error_t err;
  brk_config(e, &cfg);
  e->b = mk_brk(e->seg, &cfg);
  bw_budget_config_init(&bc);
  bc.name = "payments";
  bwt_prefill_error(&err);
  assert_null(bw_shm_budget_new(e->seg2, &bc, &err));
  assert_true(bwt_error_names(&err, "name"));
  assert_contains(err.message, "is a breaker, not a budget");
}

static void a_full_segment_is_refused_with_limit(void **st) {
  env_t *e = *st;
  bw_shm_config_t sc;
  bw_shm_limit_config_t lc;
  bw_budget_config_t bc;
  bw_error_t err;
  bw_shm_t *small;
  bw_shm_budget_t *made[BW_SHM_MAX_OBJECTS];
  char nm[80], bn[BW_SHM_MAX_OBJECTS + 1][16];
  unsigned i;
  snprintf(nm, sizeof(nm), "%s_small", e->name);
  bw_shm_config_init(&sc);
  sc.name = nm;
  sc.size = 64 * 1024;
  sc.mode = BW_SHM_CREATE;
  small = bw_shm_open(&sc, &err);
  bw_shm_unlink(nm, NULL); /* the mapping stays; nothing left behind */
  assert_non_null(small);
  bw_shm_limit_config_init(&lc);
  lc.name = "big";
  lc.max_concurrent = BW_SHM_LIMIT_MAX; /* 4096 slots of 64 bytes */
  bwt_prefill_error(&err);
  assert_null(bw_shm_limit_new(small, &lc, &err));
  assert_status(err.code, BW_E_LIMIT);
  assert_contains(err.message, "is full");
  /* The object table: BW_SHM_MAX_OBJECTS, then BW_E_LIMIT. */
  bw_budget_config_init(&bc);
  for (i = 0; i <= BW_SHM_MAX_OBJECTS; i++) {
    snprintf(bn[i], sizeof(bn[i]), "b%u", i);
    bc.name = bn[i];
    if (i < BW_SHM_MAX_OBJECTS) {
      made[i] = bw_shm_budget_new(e->seg, &bc, &err);
      assert_non_null(made[i]);
    } else {
      bwt_prefill_error(&err);
      assert_null(bw_shm_budget_new(e->seg, &bc, &err));
      assert_status(err.code, BW_E_LIMIT);
    }
  }
  for (i = 0; i < BW_SHM_MAX_OBJECTS; i++)
    bw_shm_budget_free(made[i]);
  bw_shm_close(small);
}

/* ==== the breaker ========================================================= */

static void consecutive_failures_open_it_for_every_handle(void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  bw_breaker_stats_t s;
  const bwt_event_t *ev;
  brk_config(e, &cfg);
  e->b = mk_brk(e->seg, &cfg);
  cfg.sink = NULL;
  e->b2 = mk_brk(e->seg2, &cfg);
  /* Failures on two handles add up; a success anywhere resets them. */
  call(e->b, BW_FAILURE);
  call(e->b2, BW_FAILURE);
  call(e->b2, BW_SUCCESS);
  assert_u64_eq(bstats(e->b).consecutive_failures, 0);
  call(e->b, BW_FAILURE);
  call(e->b2, BW_FAILURE);
  assert_state(bw_shm_breaker_state(e->b), BW_CLOSED);
  call(e->b, BW_FAILURE); /* the third: opens */
  assert_state(bw_shm_breaker_state(e->b), BW_OPEN);
  assert_state(bw_shm_breaker_state(e->b2), BW_OPEN);
  rejected(e->b);
  rejected(e->b2);
  assert_i64_eq(bw_shm_breaker_retry_in_ms(e->b2), 1000);
  s = bstats(e->b2);
  assert_u64_eq(s.opens, 1);
  assert_u64_eq(s.failures, 5);
  assert_u64_eq(s.successes, 1);
  assert_u64_eq(s.calls, 6);
  assert_u64_eq(s.admitted, 6);
  assert_u64_eq(s.rejected, 2);
  assert_u64_eq(s.consecutive_failures, 3);
  assert_u64_eq(s.generation, 2);
  assert_i64_eq(s.current_break_ms, 1000);
  /* The handle that made the transition emitted it, once. */
  assert_u64_eq(bwt_transition_count(e->rec), 1);
  ev = bwt_transition_at(e->rec, 0);
  assert_event(ev, BW_EV_CIRCUIT_OPENED,
               "3 consecutive failures (failure_threshold 3)");
  assert_field_int(ev, 0, "break_ms", 1000);
  assert_field_str(ev, 1, "from", "closed");
  assert_string_equal(ev->name, "payments");
  /* The break: still open 1 ms before its end, half-open at its end. */
  advance_ms(e, 999);
  rejected(e->b2);
  assert_i64_eq(bw_shm_breaker_retry_in_ms(e->b2), 1);
  advance_ms(e, 1);
  assert_i64_eq(bw_shm_breaker_retry_in_ms(e->b2), 0);
  bw_shm_breaker_poll(e->b);
  assert_state(bw_shm_breaker_state(e->b2), BW_HALF_OPEN);
  call(e->b2, BW_SUCCESS);
  assert_state(bw_shm_breaker_state(e->b), BW_CLOSED);
  s = bstats(e->b);
  assert_u64_eq(s.half_opens, 1);
  assert_u64_eq(s.closes, 1);
  assert_u64_eq(s.consecutive_failures, 0);
  assert_i64_eq(s.time_in_state_ms[BW_OPEN], 1000);
  /* Events: only e->b has a sink (half-open was made by its poll). */
  assert_event(bwt_transition_at(e->rec, 1), BW_EV_CIRCUIT_HALF_OPENED,
               "break of 1000 ms elapsed");
  assert_u64_eq(bwt_transition_count(e->rec), 2);
}

static void time_window_opens_on_ratio_once_minimum_calls_are_in(void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  bw_breaker_stats_t s;
  brk_config(e, &cfg);
  cfg.trip_rule = BW_TRIP_TIME_WINDOW;
  cfg.window_ms = 1000;
  cfg.window_buckets = 10;
  cfg.minimum_calls = 10;
  cfg.failure_ratio = 0.5;
  e->b = mk_brk(e->seg, &cfg);
  cfg.sink = NULL;
  e->b2 = mk_brk(e->seg2, &cfg);
  for (int i = 0; i < 5; i++)
    call(i % 2 ? e->b : e->b2, BW_SUCCESS);
  for (int i = 0; i < 4; i++)
    call(i % 2 ? e->b : e->b2, BW_FAILURE);
  call(e->b, BW_IGNORED); /* counts nowhere in the window */
  s = bstats(e->b);
  assert_u64_eq(s.window_calls, 9);
  assert_u64_eq(s.window_failures, 4);
  assert_state(s.state, BW_CLOSED); /* 9 < minimum_calls */
  call(e->b, BW_FAILURE);           /* 10 calls, 5 failures: 0.5 */
  assert_state(bw_shm_breaker_state(e->b2), BW_OPEN);
  assert_u64_eq(bwt_transition_count(e->rec), 1);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 0.50 >= 0.50 over 1000 ms (10 calls)");
}

static void time_window_forgets_calls_older_than_the_window(void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  brk_config(e, &cfg);
  cfg.trip_rule = BW_TRIP_TIME_WINDOW;
  cfg.window_ms = 1000;
  cfg.window_buckets = 10;
  cfg.minimum_calls = 4;
  cfg.failure_ratio = 0.5;
  e->b = mk_brk(e->seg, &cfg);
  call(e->b, BW_FAILURE); /* bucket 0 */
  advance_ms(e, 100);
  call(e->b, BW_SUCCESS); /* bucket 1 */
  call(e->b, BW_SUCCESS);
  assert_u64_eq(bstats(e->b).window_calls, 3);
  advance_ms(e, 900); /* bucket 0 has left the window */
  assert_u64_eq(bstats(e->b).window_calls, 2);
  assert_u64_eq(bstats(e->b).window_failures, 0);
  call(e->b, BW_FAILURE); /* 3 calls, 1 failure: under minimum_calls */
  call(e->b, BW_FAILURE); /* 4 calls, 2 failures: 0.5 */
  assert_state(bw_shm_breaker_state(e->b), BW_OPEN);
}

static void a_failed_probe_reopens_with_a_longer_break_up_to_the_cap(
    void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  brk_config(e, &cfg);
  cfg.failure_threshold = 1;
  cfg.break_multiplier = 2.0;
  cfg.max_break_ms = 3000;
  e->b = mk_brk(e->seg, &cfg);
  call(e->b, BW_FAILURE);
  assert_i64_eq(bw_shm_breaker_retry_in_ms(e->b), 1000);
  advance_ms(e, 1000);
  call(e->b, BW_FAILURE); /* the probe fails */
  assert_state(bw_shm_breaker_state(e->b), BW_OPEN);
  assert_i64_eq(bw_shm_breaker_retry_in_ms(e->b), 2000);
  advance_ms(e, 2000);
  call(e->b, BW_FAILURE);
  assert_i64_eq(bw_shm_breaker_retry_in_ms(e->b), 3000); /* capped */
  assert_event(bwt_nth_of(e->rec, BW_EV_CIRCUIT_OPENED, 1),
               BW_EV_CIRCUIT_OPENED, "probe failed in half-open");
  advance_ms(e, 3000);
  call(e->b, BW_SUCCESS);
  assert_state(bw_shm_breaker_state(e->b), BW_CLOSED);
  assert_i64_eq(bstats(e->b).current_break_ms, 1000); /* growth cleared */
  call(e->b, BW_FAILURE);
  assert_i64_eq(bw_shm_breaker_retry_in_ms(e->b), 1000);
}

static void a_probe_lease_expires_so_another_worker_can_probe(void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  bw_permit_t dead, p;
  brk_config(e, &cfg); /* half_open_timeout_ms 500: the probe lease */
  cfg.failure_threshold = 1;
  e->b = mk_brk(e->seg, &cfg);
  cfg.sink = NULL;
  e->b2 = mk_brk(e->seg2, &cfg);
  call(e->b, BW_FAILURE);
  advance_ms(e, 1000);
  dead = take(e->b); /* this worker will "die" holding the probe */
  assert_u64_eq(dead.kind, BW_PERMIT_PROBE);
  assert_u64_eq(dead.lease_slot, 0); /* the first of the probe slots */
  assert_u64_eq(bstats(e->b2).half_open_in_flight, 1);
  rejected(e->b2);
  assert_i64_eq(bw_shm_breaker_retry_in_ms(e->b2), 0);
  advance_ms(e, 499);
  rejected(e->b2); /* the lease holds for 500 ms */
  advance_ms(e, 1);
  assert_u64_eq(bstats(e->b2).half_open_in_flight, 0);
  p = take(e->b2); /* expired: another worker probes */
  assert_u64_eq(p.kind, BW_PERMIT_PROBE);
  assert_u64_eq(p.lease_slot, 0); /* the expired lease's slot, taken over */
  assert_u64_eq(p.generation, dead.generation);
  assert_u64_eq(bstats(e->b2).half_open_in_flight, 1);
  /* The dead worker's late release decides nothing, even a failure. */
  assert_status(bw_shm_breaker_release(e->b, &dead, BW_FAILURE), BW_E_STALE);
  assert_state(bw_shm_breaker_state(e->b), BW_HALF_OPEN);
  assert_u64_eq(bstats(e->b).stale, 1);
  assert_status(bw_shm_breaker_release(e->b2, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_shm_breaker_state(e->b), BW_CLOSED);
  assert_u64_eq(bstats(e->b).calls, 3);
}

static void a_probe_released_after_its_lease_is_stale_even_if_untaken(
    void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  bw_permit_t p;
  brk_config(e, &cfg);
  cfg.failure_threshold = 1;
  e->b = mk_brk(e->seg, &cfg);
  call(e->b, BW_FAILURE);
  advance_ms(e, 1000);
  p = take(e->b);
  advance_ms(e, 500);
  assert_status(bw_shm_breaker_release(e->b, &p, BW_SUCCESS), BW_E_STALE);
  assert_state(bw_shm_breaker_state(e->b), BW_HALF_OPEN);
  call(e->b, BW_SUCCESS); /* the slot was freed */
  assert_state(bw_shm_breaker_state(e->b), BW_CLOSED);
}

static void success_threshold_counts_probes_across_handles(void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  bw_permit_t a, b, c;
  brk_config(e, &cfg);
  cfg.failure_threshold = 1;
  cfg.half_open_max_calls = 2;
  cfg.success_threshold = 3;
  e->b = mk_brk(e->seg, &cfg);
  cfg.sink = NULL;
  e->b2 = mk_brk(e->seg2, &cfg);
  call(e->b, BW_FAILURE);
  advance_ms(e, 1000);
  a = take(e->b);
  b = take(e->b2);
  rejected(e->b); /* two probe slots, both taken */
  assert_status(bw_shm_breaker_release(e->b, &a, BW_SUCCESS), BW_OK);
  c = take(e->b);
  assert_status(bw_shm_breaker_release(e->b2, &b, BW_IGNORED), BW_OK);
  assert_state(bw_shm_breaker_state(e->b), BW_HALF_OPEN); /* 1 success */
  assert_status(bw_shm_breaker_release(e->b, &c, BW_SUCCESS), BW_OK);
  assert_state(bw_shm_breaker_state(e->b), BW_HALF_OPEN); /* 2 */
  call(e->b, BW_SUCCESS); /* 3: e->b (with the sink) closes it */
  assert_state(bw_shm_breaker_state(e->b2), BW_CLOSED);
  assert_event(bwt_nth_of(e->rec, BW_EV_CIRCUIT_CLOSED, 0),
               BW_EV_CIRCUIT_CLOSED, NULL);
  /* A new half-open starts counting from zero. */
  call(e->b, BW_FAILURE);
  advance_ms(e, 1000);
  call(e->b, BW_SUCCESS);
  assert_state(bw_shm_breaker_state(e->b), BW_HALF_OPEN);
}

static void a_release_from_an_older_generation_is_stale(void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  bw_permit_t old, old2;
  bw_breaker_stats_t s;
  brk_config(e, &cfg);
  e->b = mk_brk(e->seg, &cfg);
  cfg.sink = NULL;
  e->b2 = mk_brk(e->seg2, &cfg);
  old = take(e->b);
  old2 = take(e->b2);
  for (int i = 0; i < 3; i++)
    call(e->b2, BW_FAILURE);
  assert_state(bw_shm_breaker_state(e->b), BW_OPEN);
  advance_ms(e, 1000);
  /* A success from before the open cannot close it (or even half-open). */
  assert_status(bw_shm_breaker_release(e->b, &old, BW_SUCCESS), BW_E_STALE);
  assert_state(bw_shm_breaker_state(e->b), BW_OPEN);
  call(e->b, BW_SUCCESS); /* the probe closes it */
  assert_state(bw_shm_breaker_state(e->b), BW_CLOSED);
  /* ... and a failure from before cannot count in the new CLOSED state. */
  assert_status(bw_shm_breaker_release(e->b2, &old2, BW_FAILURE), BW_E_STALE);
  s = bstats(e->b);
  assert_u64_eq(s.consecutive_failures, 0);
  assert_u64_eq(s.stale, 2);
  assert_u64_eq(s.calls, s.successes + s.failures + s.ignored);
  assert_u64_eq(s.calls, 6);
  assert_u64_eq(s.admitted, 6);
  assert_status(bw_shm_breaker_release(e->b, &old, (bw_outcome_t)3),
                BW_E_INVAL);
  assert_u64_eq(bstats(e->b).calls, 6);
}

static void isolate_and_reset_apply_to_every_handle(void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  brk_config(e, &cfg);
  e->b = mk_brk(e->seg, &cfg);
  cfg.sink = NULL;
  e->b2 = mk_brk(e->seg2, &cfg);
  call(e->b, BW_FAILURE);
  bw_shm_breaker_isolate(e->b);
  assert_state(bw_shm_breaker_state(e->b2), BW_ISOLATED);
  rejected(e->b2);
  assert_i64_eq(bw_shm_breaker_retry_in_ms(e->b2), -1);
  advance_ms(e, 100000);
  rejected(e->b2);
  bw_shm_breaker_reset(e->b2);
  assert_state(bw_shm_breaker_state(e->b), BW_CLOSED);
  assert_u64_eq(bstats(e->b).consecutive_failures, 0);
  call(e->b, BW_SUCCESS);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_ISOLATED,
               "operator");
}

static void the_breaker_works_through_the_limit_interface(void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  bw_limit_t *l;
  bw_permit_t p;
  brk_config(e, &cfg);
  cfg.failure_threshold = 2;
  e->b = mk_brk(e->seg, &cfg);
  l = bw_shm_breaker_as_limit(e->b);
  assert_string_equal(bw_limit_kind(l), "shm_breaker");
  assert_string_equal(bw_limit_name(l), "payments");
  assert_u64_eq(bw_limit_current(l), UINT32_MAX);
  assert_status(bw_limit_try_acquire(l, &p), BW_OK);
  assert_u64_eq(bw_limit_in_flight(l), 1);
  assert_status(bw_limit_release(l, &p, BW_LIMIT_DROPPED), BW_OK);
  assert_u64_eq(bw_limit_in_flight(l), 0);
  assert_status(bw_limit_try_acquire(l, &p), BW_OK);
  assert_status(bw_limit_release(l, &p, BW_LIMIT_DROPPED), BW_OK);
  /* DROPPED is a failure: two of them opened it. */
  assert_status(bw_limit_try_acquire(l, &p), BW_E_OPEN);
  assert_u64_eq(bw_limit_current(l), 0);
  advance_ms(e, 1000);
  assert_status(bw_limit_try_acquire(l, &p), BW_OK);
  assert_u64_eq(bw_limit_current(l), 1);
  assert_status(bw_limit_release(l, &p, BW_LIMIT_SUCCESS), BW_OK);
  assert_state(bw_shm_breaker_state(e->b), BW_CLOSED);
}

static int64_t shm_kit_now(void *ud) {
  return bw_clock_now(((env_t *)ud)->clock);
}
static void shm_kit_advance(void *ud, int64_t ms) {
  advance_ms(ud, ms);
}
static uint64_t shm_kit_failures(void *ud) {
  return bstats(((env_t *)ud)->b).failures;
}

/* The pipeline behaviour every breaker shows (breaker_pipeline.h), through
 * the breaker interface: no posing as a limit. */
static void the_breaker_works_in_a_pipeline_through_the_breaker_interface(
    void **st) {
  env_t *e = *st;
  bw_breaker_config_t cfg;
  brk_config(e, &cfg);
  cfg.failure_threshold = 2;
  e->b = mk_brk(e->seg, &cfg);
  bw_breaker_if_t *bi = bw_shm_breaker_iface(e->b);
  assert_string_equal(bw_breaker_if_kind(bi), "shm_breaker");
  assert_string_equal(bw_breaker_if_name(bi), "payments");
  bwt_brk_kit_t k = {
      bi, e, shm_kit_now, shm_kit_advance, NULL, shm_kit_failures};
  bwt_breaker_pipeline_behaviour(&k);
  /* The interface's release takes any outcome: TIMED_OUT is a failure. */
  bw_shm_breaker_reset(e->b);
  bw_permit_t p;
  assert_status(bw_breaker_if_try_acquire(bi, &p), BW_OK);
  assert_status(bw_breaker_if_release(bi, &p, BW_TIMED_OUT), BW_OK);
  assert_u64_eq(bstats(e->b).failures, 3);
  assert_status(bw_breaker_if_release(bi, &p, (bw_outcome_t)9), BW_E_INVAL);
}

/* ==== the budget ========================================================== */

static void budget_tokens_move_as_grpc_says_and_are_shared(void **st) {
  env_t *e = *st;
  bw_budget_config_t bc;
  bw_budget_stats_t s;
  bw_error_t err;
  bw_budget_config_init(&bc);
  bc.name = "retries";
  bc.max_tokens = 10;
  bc.token_ratio = 0.5;
  e->bud = bw_shm_budget_new(e->seg, &bc, &err);
  e->bud2 = bw_shm_budget_new(e->seg2, &bc, &err);
  assert_non_null(e->bud);
  assert_non_null(e->bud2);
  assert_string_equal(bw_shm_budget_name(e->bud2), "retries");
  bw_shm_budget_stats(e->bud2, &s);
  assert_dbl_eq(s.tokens, 10, 0); /* starts full */
  assert_true(bw_shm_budget_try_retry(e->bud));
  for (int i = 0; i < 5; i++)
    bw_shm_budget_on_failure(i % 2 ? e->bud : e->bud2);
  bw_shm_budget_stats(e->bud, &s);
  assert_dbl_eq(s.tokens, 5, 0);
  assert_false(bw_shm_budget_try_retry(e->bud2)); /* 5 is not > 10 / 2 */
  bw_shm_budget_on_success(e->bud);
  bw_shm_budget_stats(e->bud2, &s);
  assert_dbl_eq(s.tokens, 5.5, 0);
  assert_true(bw_shm_budget_try_retry(e->bud2));
  for (int i = 0; i < 20; i++)
    bw_shm_budget_on_failure(e->bud);
  bw_shm_budget_stats(e->bud, &s);
  assert_dbl_eq(s.tokens, 0, 0); /* never below 0 */
  for (int i = 0; i < 30; i++)
    bw_shm_budget_on_success(e->bud2);
  bw_shm_budget_stats(e->bud, &s);
  assert_dbl_eq(s.tokens, 10, 0); /* never above max */
  bw_shm_budget_on_request(e->bud);
  bw_shm_budget_on_request(e->bud2);
  bw_shm_budget_stats(e->bud, &s);
  assert_u64_eq(s.requests, 2);
  assert_u64_eq(s.failures, 25);
  assert_u64_eq(s.successes, 31);
  assert_u64_eq(s.allowed, 2);
  assert_u64_eq(s.denied, 1);
  /* NULL-safe. */
  assert_false(bw_shm_budget_try_retry(NULL));
  bw_shm_budget_on_failure(NULL);
  bw_shm_budget_stats(NULL, &s);
  assert_u64_eq(s.requests, 0);
}

/* ==== the limit =========================================================== */

static void limit_slots_are_leases_that_expire(void **st) {
  env_t *e = *st;
  bw_shm_limit_config_t lc;
  bw_shm_limit_stats_t s;
  bw_error_t err;
  bw_shm_limit_t *other;
  bw_permit_t a, b, c, d;
  bw_shm_limit_config_init(&lc);
  lc.name = "slots";
  lc.max_concurrent = 2;
  lc.lease_ms = 100;
  lc.clock = e->clock;
  e->lim = bw_shm_limit_new(e->seg, &lc, &err);
  other = bw_shm_limit_new(e->seg2, &lc, &err);
  assert_non_null(e->lim);
  assert_non_null(other);
  assert_status(bw_shm_limit_try_acquire(e->lim, &a), BW_OK);
  assert_status(bw_shm_limit_try_acquire(other, &b), BW_OK);
  assert_status(bw_shm_limit_try_acquire(e->lim, &c), BW_E_FULL);
  assert_status(bw_shm_limit_release(other, &b, BW_LIMIT_SUCCESS), BW_OK);
  assert_status(bw_shm_limit_try_acquire(other, &b), BW_OK);
  /* Both holders "die". 99 ms later the slots are still held ... */
  advance_ms(e, 99);
  assert_status(bw_shm_limit_try_acquire(e->lim, &c), BW_E_FULL);
  bw_shm_limit_stats(e->lim, &s);
  assert_u64_eq(s.in_flight, 2);
  /* ... at 100 ms (a's lease) one is free again; b's ends 0 ms later too. */
  advance_ms(e, 1);
  bw_shm_limit_stats(e->lim, &s);
  assert_u64_eq(s.in_flight, 0);
  assert_status(bw_shm_limit_try_acquire(other, &c), BW_OK);
  assert_status(bw_shm_limit_try_acquire(e->lim, &d), BW_OK);
  bw_shm_limit_stats(e->lim, &s);
  assert_u64_eq(s.reclaimed, 2);
  assert_u64_eq(s.in_flight, 2);
  /* The late holders: BW_E_TIMEOUT, and the new holders keep their slots. */
  assert_status(bw_shm_limit_release(e->lim, &a, BW_LIMIT_SUCCESS),
                BW_E_TIMEOUT);
  assert_status(bw_shm_limit_release(other, &b, BW_LIMIT_DROPPED),
                BW_E_TIMEOUT);
  bw_shm_limit_stats(e->lim, &s);
  assert_u64_eq(s.in_flight, 2);
  assert_status(bw_shm_limit_release(other, &c, BW_LIMIT_IGNORED), BW_OK);
  assert_status(bw_shm_limit_release(e->lim, &d, BW_LIMIT_SUCCESS), BW_OK);
  bw_shm_limit_stats(e->lim, &s);
  assert_u64_eq(s.in_flight, 0);
  assert_u64_eq(s.admitted, 5);
  assert_u64_eq(s.rejected, 2);
  assert_u64_eq(s.successes, 3);
  assert_u64_eq(s.dropped, 1);
  assert_u64_eq(s.ignored, 1);
  assert_u64_eq(s.expired, 2);
  assert_u64_eq(s.max_concurrent, 2);
  /* A release held past its lease but not taken over frees its slot. */
  assert_status(bw_shm_limit_try_acquire(e->lim, &a), BW_OK);
  advance_ms(e, 150);
  assert_status(bw_shm_limit_release(e->lim, &a, BW_LIMIT_SUCCESS),
                BW_E_TIMEOUT);
  a.lease_slot = 2; /* not a slot of this limit */
  assert_status(bw_shm_limit_release(e->lim, &a, BW_LIMIT_SUCCESS), BW_E_INVAL);
  bw_shm_limit_free(other);
}

static void the_limit_works_through_the_limit_interface(void **st) {
  env_t *e = *st;
  bw_shm_limit_config_t lc;
  bw_error_t err;
  bw_limit_t *l;
  bw_permit_t a, b;
  bw_shm_limit_config_init(&lc);
  lc.name = "slots";
  lc.max_concurrent = 1;
  lc.clock = e->clock;
  e->lim = bw_shm_limit_new(e->seg, &lc, &err);
  l = bw_shm_limit_as_limit(e->lim);
  assert_string_equal(bw_limit_kind(l), "shm_limit");
  assert_string_equal(bw_limit_name(l), "slots");
  assert_u64_eq(bw_limit_current(l), 1);
  assert_status(bw_limit_try_acquire(l, &a), BW_OK);
  assert_u64_eq(bw_limit_in_flight(l), 1);
  assert_status(bw_limit_try_acquire(l, &b), BW_E_FULL);
  assert_status(bw_limit_release(l, &a, BW_LIMIT_SUCCESS), BW_OK);
  assert_u64_eq(bw_limit_in_flight(l), 0);
}

/* ==== allocation failure ================================================== */

/* Attaches to the segment and makes a breaker, a budget and a limit in it,
 * stopping at the first BW_E_NOMEM; frees what it made. */
static int attach_scenario(void *ctx) {
  env_t *e = ctx;
  bw_error_t err;
  bw_breaker_config_t cfg;
  bw_budget_config_t bc;
  bw_shm_limit_config_t lc;
  bw_shm_config_t sc;
  bw_shm_t *seg;
  bw_shm_breaker_t *b = NULL;
  bw_shm_budget_t *bud = NULL;
  bw_shm_limit_t *lim = NULL;
  int rc = BW_OK;
  bw_shm_config_init(&sc);
  sc.name = e->name;
  sc.mode = BW_SHM_ATTACH;
  seg = bw_shm_open(&sc, &err);
  if (seg == NULL) rc = err.code;
  if (rc == BW_OK) {
    brk_config(e, &cfg);
    b = bw_shm_breaker_new(seg, &cfg, &err);
    if (b == NULL) rc = err.code;
  }
  if (rc == BW_OK) {
    bw_budget_config_init(&bc);
    bud = bw_shm_budget_new(seg, &bc, &err);
    if (bud == NULL) rc = err.code;
  }
  if (rc == BW_OK) {
    bw_shm_limit_config_init(&lc);
    lc.name = "slots";
    lim = bw_shm_limit_new(seg, &lc, &err);
    if (lim == NULL) rc = err.code;
  }
  bw_shm_breaker_free(b);
  bw_shm_budget_free(bud);
  bw_shm_limit_free(lim);
  bw_shm_close(seg);
  if (rc != BW_OK) assert_status(rc, BW_E_NOMEM);
  return rc;
}

static void every_allocation_failure_is_nomem_and_leaks_nothing(void **st) {
  /* Lenient: objects made despite a failed allocation need not have failed,
   * only leak nothing; each one that failed said BW_E_NOMEM. */
  assert_true(oom_walk_lenient(attach_scenario, *st, false, NULL) <= 100);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
      T(create_is_mode_0600_and_attach_sees_the_same_objects),
      T(a_name_without_slash_gets_one_and_unlink_removes_it),
      T(attaching_a_missing_segment_is_notfound_naming_it),
      T(creating_an_existing_segment_is_refused),
      T(a_corrupt_header_is_refused_naming_what_differs),
      T(a_segment_that_is_not_breakwaters_is_refused),
      T(a_segment_others_can_open_is_refused_naming_owner_and_mode),
      T(a_segment_owned_by_another_user_is_refused),
      T(a_group_segment_needs_the_opt_in_and_its_group),
      T(group_needs_allow_group_and_a_group_id),
      T(a_creator_outside_the_group_is_refused_naming_group),
      T(a_truncated_segment_is_refused_on_attach),
      T(a_segment_truncated_while_mapped_is_refused_at_object_creation),
      T(names_too_long_or_malformed_are_refused),
      T(bad_configurations_are_refused_naming_the_field),
      T(attaching_with_a_different_config_is_refused),
      T(a_name_of_another_kind_is_refused),
      T(a_full_segment_is_refused_with_limit),
      T(consecutive_failures_open_it_for_every_handle),
      T(time_window_opens_on_ratio_once_minimum_calls_are_in),
      T(time_window_forgets_calls_older_than_the_window),
      T(a_failed_probe_reopens_with_a_longer_break_up_to_the_cap),
      T(a_probe_lease_expires_so_another_worker_can_probe),
      T(a_probe_released_after_its_lease_is_stale_even_if_untaken),
      T(success_threshold_counts_probes_across_handles),
      T(a_release_from_an_older_generation_is_stale),
      T(isolate_and_reset_apply_to_every_handle),
      T(the_breaker_works_through_the_limit_interface),
      T(the_breaker_works_in_a_pipeline_through_the_breaker_interface),
      T(budget_tokens_move_as_grpc_says_and_are_shared),
      T(limit_slots_are_leases_that_expire),
      T(the_limit_works_through_the_limit_interface),
      T(every_allocation_failure_is_nomem_and_leaks_nothing),
#undef T
  };
  oom_install();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
