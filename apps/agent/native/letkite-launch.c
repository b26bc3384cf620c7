/*
 * letkite-launch — the agent's exec launcher: a small, persistent child of the agent that does the fork + exec of
 * `exec` commands. Forking copies the parent's page tables, so forking from this ~1 MiB static process is far
 * cheaper than from the agent (or from a bare Node). It is a thin proxy: the agent (launcher-client.ts, runExec in
 * exec.ts) decides everything — timeouts, cancellation, killing the process group, the linger kill — and kills
 * groups itself by pid; this process only spawns, feeds stdin and extra fds, keeps the newest `max` bytes of each
 * output stream, and reports what happens. It never logs a command's contents; its own environment is the
 * agent's fixed allowlist (launcherEnv), each command's comes with its spawn.
 *
 * It spawns exactly as Node's child_process.spawn(file, args, { detached: true, cwd, env, uid, gid, stdio: pipes })
 * does on Linux (libuv's uv_spawn, src/unix/process.c): in the child setsid(), the pipes onto 0, 1, 2, 3…, every
 * other fd closed, chdir(cwd), setgroups(0, NULL) (its failure ignored) when a uid or gid is given, setgid,
 * setuid, every signal disposition to default and an empty mask, then glibc's execvp with `environ` set to the
 * command's: a bare file name is searched on the command's PATH (glibc's default path without one), ENOEXEC runs
 * it with /bin/sh — the same function Node ends in. A failure before or at exec is sent over a close-on-exec pipe
 * (as libuv does) and reported like Node: ENOENT, EACCES, EAGAIN, EMFILE, ENFILE become `error` then `close`
 * (Node emits them as the child's 'error' event); any other errno is `throw` (Node's spawn() throws).
 *
 * Protocol, on stdin (from the agent) and stdout (to it). Every frame is a little-endian u32 body length, then
 * the body: u8 type, u32 id (the agent's number for the command; 0 for `ready`), then the fields below.
 * `bytes` is a u32 length and that many bytes; `str` is the same, holding text; integers are little-endian.
 *
 *   in   1 spawn  u32 flags (1 uid, 2 gid, 8 cwd), u32 uid, u32 gid, u32 max,
 *                 str file, str cwd, u32 argc, argc × str (argv[1…]; argv[0] is file, as Node sets it),
 *                 u32 envc, envc × str ("NAME=value"), u32 nfds (≤ 64), nfds × bytes (fd 3 onwards),
 *                 bytes stdin — an input with nothing to write (none, or empty) is sent empty
 *   out  0 ready  (nothing): sent once, at start
 *        1 pid    u32 pid
 *        2 throw  str code ("ENOTDIR", "EPERM" …): the spawn failed; nothing follows for this id
 *        3 error  str code ("ENOENT", "EACCES" …): the program did not start; `close` follows
 *        4 exit   i32 code, str signal ("" when it exited; then code is its exit status, else 0)
 *        5 close  i32 code, str signal (as exit; after an `error`, code is -errno), u8 cut (1 stdout, 2 stderr),
 *                 bytes stdout, bytes stderr (each the newest `max` bytes; cut when more arrived)
 *
 * Per id, in this order: pid (unless the spawn failed), error?, exit?, close — `close` once the command exited
 * and both its output pipes reached EOF. An extra fd with data gets it written as the command reads, then
 * closed; one without (Node's `null`: nothing written) is closed at once, so the command reads EOF. stdin
 * likewise; a command that exits without
 * reading everything (EPIPE) is not an error. When the agent closes our stdin, we exit: the commands keep
 * running, as they would after an in-process agent died (their pipes close with us).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { IN_SPAWN = 1 };
enum { OUT_READY = 0, OUT_PID = 1, OUT_THROW = 2, OUT_ERROR = 3, OUT_EXIT = 4, OUT_CLOSE = 5 };
enum { F_UID = 1, F_GID = 2, F_CWD = 8 };
/* More extra fds than any caller passes (the sandbox helper takes one): a bound for the child's fd table. */
#define MAX_EXTRA_FDS 64
/* A frame larger than this is a broken agent, not a command: refuse it rather than allocate it. */
#define MAX_FRAME (1u << 30)

static void die(const char *what) {
  /* Only our own failure, never a command's contents. */
  fprintf(stderr, "letkite-launch: %s: %s\n", what, strerror(errno));
  exit(70);
}

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) die("out of memory");
  return q;
}

/* ---- growable byte buffer (frames in and out) ---- */

struct buf {
  uint8_t *data;
  size_t len, cap, off; /* off: bytes already consumed from the front */
};

/* Drops the consumed front. Only between frames: a frame being composed keeps its offsets. */
static void buf_compact(struct buf *b) {
  if (b->off == 0) return;
  memmove(b->data, b->data + b->off, b->len - b->off);
  b->len -= b->off;
  b->off = 0;
}

static void buf_reserve(struct buf *b, size_t more) {
  if (b->len + more <= b->cap) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + more) cap *= 2;
  b->data = xrealloc(b->data, cap);
  b->cap = cap;
}

static void buf_put(struct buf *b, const void *p, size_t n) {
  buf_reserve(b, n);
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

static void buf_u8(struct buf *b, uint8_t v) { buf_put(b, &v, 1); }

static void buf_u32(struct buf *b, uint32_t v) {
  uint8_t le[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff};
  buf_put(b, le, 4);
}

static void buf_str(struct buf *b, const char *s) {
  size_t n = strlen(s);
  buf_u32(b, (uint32_t)n);
  buf_put(b, s, n);
}

/* ---- tail: the newest `max` bytes of a stream, the same cut rule as TailBuffer (cut = more than max arrived) */

struct tail {
  uint8_t *data;
  size_t cap, len, start, max; /* a ring once len == max; grows only up to max */
  int cut;
};

static void tail_write(struct tail *t, const uint8_t *p, size_t n) {
  if (n == 0) return;
  if (t->len + n > t->max) t->cut = 1;
  if (n >= t->max) {
    if (t->cap < t->max) t->data = xrealloc(t->data, t->cap = t->max);
    memcpy(t->data, p + (n - t->max), t->max);
    t->start = 0;
    t->len = t->max;
    return;
  }
  size_t want = t->len + n < t->max ? t->len + n : t->max;
  if (t->cap < want) {
    /* Still linear (start == 0) until len first reaches max: growing keeps the bytes in place. */
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < want) cap *= 2;
    if (cap > t->max) cap = t->max;
    t->data = xrealloc(t->data, t->cap = cap);
  }
  if (t->len + n <= t->max) {
    size_t at = (t->start + t->len) % t->max;
    size_t first = n < t->cap - at ? n : t->cap - at;
    memcpy(t->data + at, p, first);
    memcpy(t->data, p + first, n - first);
    t->len += n;
    return;
  }
  /* Full ring (cap == max): overwrite the oldest bytes, which are exactly those dropped. */
  size_t drop = t->len + n - t->max;
  size_t at = (t->start + t->len) % t->max;
  size_t first = n < t->max - at ? n : t->max - at;
  memcpy(t->data + at, p, first);
  memcpy(t->data, p + first, n - first);
  t->start = (t->start + drop) % t->max;
  t->len = t->max;
}

static void buf_tail(struct buf *b, const struct tail *t) {
  buf_u32(b, (uint32_t)t->len);
  if (t->len == 0) return;
  size_t first = t->len < t->cap - t->start ? t->len : t->cap - t->start;
  buf_put(b, t->data + t->start, first);
  buf_put(b, t->data, t->len - first);
}

/* ---- names, as Node spells them ---- */

static const char *errno_name(int e, char *fallback, size_t size) {
  switch (e) {
#define E(x) \
  case x:    \
    return #x;
    E(E2BIG) E(EACCES) E(EAGAIN) E(EBADF) E(EFAULT) E(EINVAL) E(EIO) E(EISDIR) E(ELOOP) E(EMFILE)
    E(ENAMETOOLONG) E(ENFILE) E(ENODEV) E(ENOENT) E(ENOEXEC) E(ENOMEM) E(ENOTDIR) E(ENXIO) E(EPERM) E(ETXTBSY)
#undef E
  }
  /* libuv names only the errnos it maps; Node reports any other as this. */
  snprintf(fallback, size, "Unknown system error -%d", e);
  return fallback;
}

/* Node's signo_string: "" for a signal it has no name for (the exit then looks like code 0, as in Node). */
static const char *signal_name(int sig) {
  switch (sig) {
#define S(x) \
  case x:    \
    return #x;
    S(SIGHUP) S(SIGINT) S(SIGQUIT) S(SIGILL) S(SIGTRAP) S(SIGABRT) S(SIGBUS) S(SIGFPE) S(SIGKILL) S(SIGUSR1)
    S(SIGSEGV) S(SIGUSR2) S(SIGPIPE) S(SIGALRM) S(SIGTERM) S(SIGCHLD) S(SIGCONT) S(SIGSTOP) S(SIGTSTP)
    S(SIGTTIN) S(SIGTTOU) S(SIGURG) S(SIGXCPU) S(SIGXFSZ) S(SIGVTALRM) S(SIGPROF) S(SIGWINCH) S(SIGIO)
    S(SIGSYS)
#ifdef SIGSTKFLT
    S(SIGSTKFLT)
#endif
#ifdef SIGPWR
    S(SIGPWR)
#endif
#undef S
  }
  return "";
}

/* Node turns these spawn errors into the child's 'error' event; any other errno makes spawn() throw. */
static int reported_as_error_event(int e) {
  return e == EACCES || e == EAGAIN || e == EMFILE || e == ENFILE || e == ENOENT;
}

/* ---- commands ---- */

/* Data for one of the command's input fds (stdin, 3, 4 …), written as the command reads it. */
struct feed {
  int fd;
  uint8_t *data;
  size_t len, off;
};

struct cmd {
  uint32_t id;
  pid_t pid;
  int out_fd, err_fd; /* -1 once at EOF */
  struct tail out, err;
  struct feed *feeds;
  size_t nfeeds;
  int exited, status;
};

static struct cmd **cmds;
static size_t ncmds, capcmds;
static struct buf to_agent;

static void frame_begin(struct buf *b, size_t *at, uint8_t type, uint32_t id) {
  *at = b->len;
  buf_u32(b, 0); /* the length, filled in by frame_end */
  buf_u8(b, type);
  buf_u32(b, id);
}

static void frame_end(struct buf *b, size_t at) {
  uint32_t n = (uint32_t)(b->len - at - 4);
  uint8_t le[4] = {n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >> 24) & 0xff};
  memcpy(b->data + at, le, 4);
}

static void send_code(uint8_t type, uint32_t id, int e) {
  char fallback[48];
  size_t at;
  frame_begin(&to_agent, &at, type, id);
  buf_str(&to_agent, errno_name(e, fallback, sizeof fallback));
  frame_end(&to_agent, at);
}

static void send_status(uint8_t type, uint32_t id, int code, const char *sig) {
  size_t at;
  frame_begin(&to_agent, &at, type, id);
  buf_u32(&to_agent, (uint32_t)code);
  buf_str(&to_agent, sig);
  if (type == OUT_EXIT) frame_end(&to_agent, at);
}

/* A close frame: the status fields (send_status began it), then the cut flags and both tails. */
static void send_close(uint32_t id, int code, const char *sig, const struct tail *out, const struct tail *err) {
  size_t at = to_agent.len;
  send_status(OUT_CLOSE, id, code, sig);
  buf_u8(&to_agent, (uint8_t)((out->cut ? 1 : 0) | (err->cut ? 2 : 0)));
  buf_tail(&to_agent, out);
  buf_tail(&to_agent, err);
  frame_end(&to_agent, at);
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static void cmd_free(struct cmd *c) {
  close_fd(&c->out_fd);
  close_fd(&c->err_fd);
  for (size_t i = 0; i < c->nfeeds; i++) {
    close_fd(&c->feeds[i].fd);
    free(c->feeds[i].data);
  }
  free(c->feeds);
  free(c->out.data);
  free(c->err.data);
  free(c);
}

/* ---- reading a spawn frame ---- */

struct reader {
  const uint8_t *p, *end;
  int bad;
};

static uint32_t rd_u32(struct reader *r) {
  if (r->end - r->p < 4) {
    r->bad = 1;
    return 0;
  }
  uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
  r->p += 4;
  return v;
}

/* A length-prefixed field as a fresh NUL-terminated copy (the agent refuses NUL bytes inside strings). */
static char *rd_str(struct reader *r, size_t *len) {
  uint32_t n = rd_u32(r);
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = 1;
    return NULL;
  }
  char *s = xrealloc(NULL, (size_t)n + 1);
  memcpy(s, r->p, n);
  s[n] = 0;
  r->p += n;
  if (len) *len = n;
  return s;
}

struct spawn_req {
  uint32_t id, flags, uid, gid, max;
  char *file, *cwd;
  char **argv, **envp; /* NULL-terminated */
  uint32_t argc, envc, nfds;
  struct feed *feeds; /* [0] stdin, then fd 3 … */
};

static void req_free(struct spawn_req *q) {
  free(q->file);
  free(q->cwd);
  for (uint32_t i = 0; q->argv && q->argv[i]; i++) free(q->argv[i]);
  for (uint32_t i = 0; q->envp && q->envp[i]; i++) free(q->envp[i]);
  free(q->argv);
  free(q->envp);
}

static int parse_spawn(struct reader *r, struct spawn_req *q) {
  q->flags = rd_u32(r);
  q->uid = rd_u32(r);
  q->gid = rd_u32(r);
  q->max = rd_u32(r);
  q->file = rd_str(r, NULL);
  q->cwd = rd_str(r, NULL);
  q->argc = rd_u32(r);
  if (r->bad || q->argc > (uint32_t)(r->end - r->p) / 4) return -1;
  q->argv = xrealloc(NULL, ((size_t)q->argc + 2) * sizeof(char *));
  q->argv[0] = strdup(q->file);
  for (uint32_t i = 0; i < q->argc; i++) q->argv[i + 1] = rd_str(r, NULL);
  q->argv[q->argc + 1] = NULL;
  q->envc = rd_u32(r);
  if (r->bad || q->envc > (uint32_t)(r->end - r->p) / 4) return -1;
  q->envp = xrealloc(NULL, ((size_t)q->envc + 1) * sizeof(char *));
  for (uint32_t i = 0; i < q->envc; i++) q->envp[i] = rd_str(r, NULL);
  q->envp[q->envc] = NULL;
  q->nfds = rd_u32(r);
  if (r->bad || q->nfds > MAX_EXTRA_FDS) return -1;
  q->feeds = calloc((size_t)q->nfds + 1, sizeof(struct feed));
  if (!q->feeds) die("out of memory");
  for (uint32_t i = 0; i <= q->nfds; i++) {
    /* feeds[0] is stdin, the last field; feeds[1…] are fd 3 … in order. */
    struct feed *f = &q->feeds[i == q->nfds ? 0 : i + 1];
    f->fd = -1;
    uint32_t n = rd_u32(r);
    if (r->bad || (size_t)(r->end - r->p) < n) return -1;
    f->data = xrealloc(NULL, n);
    memcpy(f->data, r->p, n);
    f->len = n;
    r->p += n;
  }
  for (uint32_t i = 0; i <= q->argc; i++)
    if (!q->argv[i]) return -1;
  for (uint32_t i = 0; i < q->envc; i++)
    if (!q->envp[i]) return -1;
  return r->bad || r->p != r->end || !q->file || !q->cwd ? -1 : 0;
}

/* ---- the child, between fork and exec ---- */

static void child_fail(int report_fd, int e) {
  while (write(report_fd, &e, sizeof e) < 0 && errno == EINTR) {
  }
  _exit(127);
}

static void close_from(int low, int keep) {
  /* close_range where the kernel has it (5.9+); else every fd up to the limit. */
  if (keep > low && syscall(SYS_close_range, (unsigned)low, (unsigned)keep - 1, 0u) != 0) goto slow;
  if (syscall(SYS_close_range, (unsigned)(keep >= low ? keep + 1 : low), ~0u, 0u) == 0) return;
slow:;
  struct rlimit rl;
  long top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 65536;
  for (long fd = low; fd < top; fd++)
    if (fd != keep) close((int)fd);
}

/* `fds[i]` becomes fd i (0 stdin, 1 stdout, 2 stderr, 3 … the extra fds); report_fd is close-on-exec. */
static void child(const struct spawn_req *q, int *fds, int count, int report_fd) {
  setsid();
  /* A source below `count` could be overwritten by an earlier dup2: move it above first (as libuv does). */
  if (report_fd < count) {
    report_fd = fcntl(report_fd, F_DUPFD_CLOEXEC, count);
    if (report_fd < 0) _exit(127);
  }
  for (int i = 0; i < count; i++) {
    if (fds[i] < count) {
      fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, count);
      if (fds[i] < 0) child_fail(report_fd, errno);
    }
  }
  for (int i = 0; i < count; i++)
    if (dup2(fds[i], i) < 0) child_fail(report_fd, errno);
  close_from(count, report_fd);
  if ((q->flags & F_CWD) && chdir(q->cwd) != 0) child_fail(report_fd, errno);
  if (q->flags & (F_UID | F_GID)) {
    /* As libuv: drop supplementary groups when switching; fails (ignored) when we may not. */
    int saved = errno;
    (void)setgroups(0, NULL);
    errno = saved;
  }
  if ((q->flags & F_GID) && setgid((gid_t)q->gid) != 0) child_fail(report_fd, errno);
  if ((q->flags & F_UID) && setuid((uid_t)q->uid) != 0) child_fail(report_fd, errno);
  for (int s = 1; s < 32; s++) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    if (signal(s, SIG_DFL) == SIG_ERR) child_fail(report_fd, errno);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  environ = q->envp;
  execvp(q->file, q->argv);
  child_fail(report_fd, errno);
}

static void set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) die("fcntl");
}

/* Starts one command and reports pid, or throw / error + close. */
static void spawn_cmd(struct spawn_req *q) {
  int count = 3 + (int)q->nfds;
  int child_fds[count], parent_fds[count];
  int report[2] = {-1, -1};
  int e = 0;
  for (int i = 0; i < count; i++) child_fds[i] = parent_fds[i] = -1;
  for (int i = 0; i < count && !e; i++) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
      e = errno;
      break;
    }
    /* stdout and stderr: the command writes, we read; the rest the other way round. */
    int child_writes = i == 1 || i == 2;
    child_fds[i] = child_writes ? p[1] : p[0];
    parent_fds[i] = child_writes ? p[0] : p[1];
  }
  if (!e && pipe2(report, O_CLOEXEC) != 0) e = errno;
  pid_t pid = -1;
  if (!e) {
    pid = fork();
    if (pid < 0) e = errno;
    if (pid == 0) {
      close(report[0]);
      child(q, child_fds, count, report[1]);
    }
  }
  for (int i = 0; i < count; i++) close_fd(&child_fds[i]);
  close_fd(&report[1]);
  if (!e) {
    /* Wait for exec (EOF: the pipe was closed on exec) or its failure, as libuv does. */
    int child_errno = 0;
    ssize_t n;
    while ((n = read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
    }
    if (n == sizeof child_errno) {
      e = child_errno;
      while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
      }
    }
  }
  close_fd(&report[0]);
  if (e) {
    for (int i = 0; i < count; i++) close_fd(&parent_fds[i]);
    for (uint32_t i = 0; i <= q->nfds; i++) free(q->feeds[i].data);
    free(q->feeds);
    if (reported_as_error_event(e)) {
      struct tail none = {0};
      send_code(OUT_ERROR, q->id, e);
      send_close(q->id, -e, "", &none, &none);
    } else {
      send_code(OUT_THROW, q->id, e);
    }
    return;
  }

  struct cmd *c = calloc(1, sizeof *c);
  if (!c) die("out of memory");
  c->id = q->id;
  c->pid = pid;
  c->out_fd = parent_fds[1];
  c->err_fd = parent_fds[2];
  c->out.max = c->err.max = q->max;
  c->feeds = q->feeds;
  c->nfeeds = (size_t)q->nfds + 1;
  for (size_t i = 0; i < c->nfeeds; i++) {
    struct feed *f = &c->feeds[i];
    f->fd = parent_fds[i == 0 ? 0 : i + 2];
    set_nonblock(f->fd);
    if (f->len == 0) close_fd(&f->fd); /* nothing to write: the command reads EOF */
  }
  set_nonblock(c->out_fd);
  set_nonblock(c->err_fd);
  if (ncmds == capcmds) cmds = xrealloc(cmds, (capcmds = capcmds ? capcmds * 2 : 16) * sizeof *cmds);
  cmds[ncmds++] = c;

  size_t at;
  frame_begin(&to_agent, &at, OUT_PID, q->id);
  buf_u32(&to_agent, (uint32_t)pid);
  frame_end(&to_agent, at);
}

/* ---- the loop ---- */

static struct buf from_agent;

/* Handles every complete frame received; returns -1 on a malformed one. */
static int handle_frames(void) {
  for (;;) {
    size_t avail = from_agent.len - from_agent.off;
    const uint8_t *p = from_agent.data + from_agent.off;
    if (avail < 4) return 0;
    uint32_t n = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    if (n < 5 || n > MAX_FRAME) return -1;
    if (avail - 4 < n) {
      buf_reserve(&from_agent, n + 4 - avail);
      return 0;
    }
    struct reader r = {p + 4, p + 4 + n, 0};
    uint8_t type = *r.p++;
    uint32_t id = rd_u32(&r);
    if (type != IN_SPAWN) return -1;
    struct spawn_req q = {0};
    q.id = id;
    if (parse_spawn(&r, &q) != 0) return -1;
    from_agent.off += 4 + (size_t)n;
    spawn_cmd(&q);
    req_free(&q);
  }
}

static void flush_to_agent(void) {
  while (to_agent.off < to_agent.len) {
    ssize_t n = write(1, to_agent.data + to_agent.off, to_agent.len - to_agent.off);
    if (n > 0) {
      to_agent.off += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    exit(0); /* the agent is gone */
  }
  to_agent.off = to_agent.len = 0;
}

static void drain(int *fd, struct tail *t) {
  uint8_t chunk[65536];
  for (;;) {
    ssize_t n = read(*fd, chunk, sizeof chunk);
    if (n > 0) {
      tail_write(t, chunk, (size_t)n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close_fd(fd); /* EOF (or an error: no more output either way) */
    return;
  }
}

static void feed(struct feed *f) {
  while (f->fd >= 0 && f->off < f->len) {
    ssize_t n = write(f->fd, f->data + f->off, f->len - f->off);
    if (n > 0) {
      f->off += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    break; /* EPIPE: the command stopped reading; not an error of ours */
  }
  close_fd(&f->fd);
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (size_t i = 0; i < ncmds; i++) {
      struct cmd *c = cmds[i];
      if (c->pid != pid || c->exited) continue;
      c->exited = 1;
      c->status = status;
      /* What it wrote is in the pipes already: read it now; close still waits for EOF (a child of it may hold
       * them open until the agent ends the group). */
      if (c->out_fd >= 0) drain(&c->out_fd, &c->out);
      if (c->err_fd >= 0) drain(&c->err_fd, &c->err);
      send_status(OUT_EXIT, c->id, WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                  WIFSIGNALED(status) ? signal_name(WTERMSIG(status)) : "");
      break;
    }
  }
}

/* Sends `close` for every command that exited with both outputs at EOF, and forgets it. */
static void finish_done(void) {
  for (size_t i = 0; i < ncmds;) {
    struct cmd *c = cmds[i];
    if (!c->exited || c->out_fd >= 0 || c->err_fd >= 0) {
      i++;
      continue;
    }
    int st = c->status;
    send_close(c->id, WIFEXITED(st) ? WEXITSTATUS(st) : 0, WIFSIGNALED(st) ? signal_name(WTERMSIG(st)) : "",
               &c->out, &c->err);
    cmd_free(c);
    cmds[i] = cmds[--ncmds];
  }
}

int main(void) {
  /* EPIPE on a command's stdin is reported as an error of write(), not a signal that would end us. */
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &chld, NULL) != 0) die("sigprocmask");
  int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd < 0) die("signalfd");
  set_nonblock(0);
  set_nonblock(1);

  size_t at;
  frame_begin(&to_agent, &at, OUT_READY, 0);
  frame_end(&to_agent, at);
  flush_to_agent();

  struct pollfd *pfds = NULL;
  size_t cappfds = 0;
  for (;;) {
    size_t need = 2 + ncmds * 2;
    for (size_t i = 0; i < ncmds; i++) need += cmds[i]->nfeeds;
    if (need > cappfds) pfds = xrealloc(pfds, (cappfds = need * 2) * sizeof *pfds);
    size_t np = 0;
    pfds[np++] = (struct pollfd){.fd = 0, .events = POLLIN};
    pfds[np++] = (struct pollfd){.fd = sfd, .events = POLLIN};
    if (to_agent.off < to_agent.len) pfds[np++] = (struct pollfd){.fd = 1, .events = POLLOUT};
    for (size_t i = 0; i < ncmds; i++) {
      struct cmd *c = cmds[i];
      if (c->out_fd >= 0) pfds[np++] = (struct pollfd){.fd = c->out_fd, .events = POLLIN};
      if (c->err_fd >= 0) pfds[np++] = (struct pollfd){.fd = c->err_fd, .events = POLLIN};
      for (size_t k = 0; k < c->nfeeds; k++)
        if (c->feeds[k].fd >= 0) pfds[np++] = (struct pollfd){.fd = c->feeds[k].fd, .events = POLLOUT};
    }
    if (poll(pfds, np, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    /* Outputs and inputs of commands first, then exits, then the agent. The walk visits the fds in the order
     * they were added, under the same conditions (handling one fd changes only its own). */
    size_t k = to_agent.off < to_agent.len ? 3 : 2;
    for (size_t i = 0; i < ncmds; i++) {
      struct cmd *c = cmds[i];
      if (c->out_fd >= 0 && pfds[k++].revents) drain(&c->out_fd, &c->out);
      if (c->err_fd >= 0 && pfds[k++].revents) drain(&c->err_fd, &c->err);
      for (size_t f = 0; f < c->nfeeds; f++)
        if (c->feeds[f].fd >= 0 && pfds[k++].revents) feed(&c->feeds[f]);
    }
    if (pfds[1].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == sizeof si) {
      }
      reap();
    }
    finish_done();
    if (pfds[0].revents) {
      buf_compact(&from_agent);
      buf_reserve(&from_agent, 65536);
      ssize_t n = read(0, from_agent.data + from_agent.len, from_agent.cap - from_agent.len);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        flush_to_agent();
        exit(0); /* the agent closed our stdin: nothing more to do; commands keep running */
      }
      if (n > 0) {
        from_agent.len += (size_t)n;
        if (handle_frames() != 0) {
          fprintf(stderr, "letkite-launch: malformed frame from the agent\n");
          exit(65);
        }
      }
    }
    flush_to_agent();
  }
}
