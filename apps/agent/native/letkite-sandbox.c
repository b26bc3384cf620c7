/*
 * letkite-sandbox — run one command confined: Landlock (files, TCP), seccomp (socket families and types, io_uring,
 * keyrings, TCP Fast Open), no capabilities, and private namespaces (mount: denied paths hidden; PID: its own
 * /proc; network: none unless TCP is granted; IPC, UTS).
 *
 *   letkite-sandbox [--ro PATH]... [--rw PATH]... [--deny PATH]... --tmp DIR [--tcp none|all|PORT[,PORT...]]
 *                   [--cwd DIR] [--env-fd N] -- PROGRAM [ARG]...
 *   letkite-sandbox --probe          prints {"abi":N,"landlock":bool,"userns":bool,"seccomp":bool,...} on stdout
 *
 * The spec is on the command line: it holds only paths and ports, never secrets. The command's environment is
 * read from fd N (`--env-fd`: NUL-separated NAME=VALUE entries up to EOF) and handed to execve only, after every
 * restriction is in place; without --env-fd the command gets the helper's own environment. The helper's own
 * environment is built by the agent from a fixed allowlist; the helper is linked statically, so no loader
 * variable can act on it, and it refuses loader variables (LD_*, GCONV_PATH, GLIBC_TUNABLES, MALLOC_*, ...) in
 * either environment. PROGRAM is resolved with the helper's PATH (the trusted one), never the request's.
 *
 * Fail closed: when any step cannot be applied the command is NOT executed; the helper prints one line
 * "letkite-sandbox: <kind>: <detail>" on stderr and exits with SANDBOX_REFUSED (125). Once the sandbox is in
 * place, a failed exec exits 127 (not found) or 126 (other), like a shell.
 *
 * Processes: the helper (outside the PID namespace) forks the sandbox's init (PID 1 inside), which sets up the
 * mounts and every restriction, then forks the command. Signals sent to the helper or to init are passed on;
 * the command's exit status (or signal) becomes the helper's. When init ends, the kernel ends everything the
 * command left behind. See ../src/sandbox/README.md for the design.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Everything Landlock is defined here under our own names: Debian 12's <linux/landlock.h> stops at ABI 2, and a
 * newer header would redefine the structs. Values are the kernel's UAPI (include/uapi/linux/landlock.h). */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

/* ABI 1 */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
/* ABI 2 */
#define LL_FS_REFER (1ULL << 13)
/* ABI 3 */
#define LL_FS_TRUNCATE (1ULL << 14)
/* ABI 5 */
#define LL_FS_IOCTL_DEV (1ULL << 15)
/* ABI 4 */
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
/* ABI 6 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
  uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
};

/* Below ABI 3, truncate(2) on a path is not controlled: a read-only file could be emptied. Refuse instead. */
#define MIN_ABI 3
#define NET_ABI 4
#define SCOPE_ABI 6

#define SANDBOX_REFUSED 125
#define PREFIX "letkite-sandbox: "
#define MAX_ENTRIES 256
#define MAX_PORTS 64
/* The command's environment read from --env-fd: at most this many bytes and entries. */
#define MAX_ENV_BYTES (1 << 20)
#define MAX_ENV_ENTRIES 4096

static void refuse(const char *kind, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void refuse(const char *kind, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  for (char *c = msg; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  dprintf(2, PREFIX "%s: %s\n", kind, msg);
  _exit(SANDBOX_REFUSED);
}

static int ll_abi(void) {
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi < 0 ? -errno : (int)abi;
}

static uint64_t fs_rights_for(int abi) {
  uint64_t r = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR |
               LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK |
               LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM;
  if (abi >= 2) r |= LL_FS_REFER;
  if (abi >= 3) r |= LL_FS_TRUNCATE;
  if (abi >= 5) r |= LL_FS_IOCTL_DEV;
  return r;
}

#define RIGHTS_READ (LL_FS_READ_FILE | LL_FS_READ_DIR)
#define RIGHTS_EXEC (LL_FS_EXECUTE)
#define RIGHTS_WRITE                                                                                            \
  (LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | \
   LL_FS_MAKE_FIFO | LL_FS_MAKE_SYM | LL_FS_REFER | LL_FS_TRUNCATE)
/* Rights that apply to a file (not a directory); adding others on a file rule is EINVAL. */
#define RIGHTS_FILE (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

struct grant {
  const char *path;
  uint64_t rights;
  int optional; /* a missing system path is skipped; so is a missing spec path (granting nothing is stricter) */
};

/* Read + execute: where programs and libraries live. Read only: configuration and kernel views. */
static const struct grant system_grants[] = {
    {"/usr", RIGHTS_READ | RIGHTS_EXEC, 1},   {"/bin", RIGHTS_READ | RIGHTS_EXEC, 1},
    {"/sbin", RIGHTS_READ | RIGHTS_EXEC, 1},  {"/lib", RIGHTS_READ | RIGHTS_EXEC, 1},
    {"/lib32", RIGHTS_READ | RIGHTS_EXEC, 1}, {"/lib64", RIGHTS_READ | RIGHTS_EXEC, 1},
    {"/libx32", RIGHTS_READ | RIGHTS_EXEC, 1}, {"/opt", RIGHTS_READ | RIGHTS_EXEC, 1},
    {"/etc", RIGHTS_READ, 1},                 {"/proc", RIGHTS_READ, 1},
    {"/sys", RIGHTS_READ, 1},                 {"/dev", LL_FS_READ_DIR, 1},
};

/* Devices every program expects; read/write plus device ioctls (isatty on /dev/tty needs them at ABI >= 5). */
static const char *const device_grants[] = {"/dev/null", "/dev/zero",  "/dev/full", "/dev/random",
                                            "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"};

struct spec {
  const char *ro[MAX_ENTRIES];
  int n_ro;
  const char *rw[MAX_ENTRIES];
  int n_rw;
  const char *deny[MAX_ENTRIES];
  int n_deny;
  const char *tmp;
  int tcp_all;
  uint16_t ports[MAX_PORTS];
  int n_ports;
  const char *cwd; /* entered after every restriction; default: the directory the helper was started in */
  int env_fd;      /* -1: the command gets the helper's own environment */
  char **argv;
};

/* No TCP granted at all: the sandbox gets no network (an empty network namespace, and no inet sockets). */
static int no_network(const struct spec *s) { return !s->tcp_all && s->n_ports == 0; }

static void check_path(const char *flag, const char *p) {
  if (p == NULL) refuse("usage", "%s needs a path", flag);
  if (p[0] != '/') refuse("usage", "%s path must be absolute: \"%s\"", flag, p);
  if (strlen(p) >= PATH_MAX) refuse("usage", "%s path too long", flag);
}

static void push(const char **list, int *n, const char *flag, const char *p) {
  check_path(flag, p);
  if (*n >= MAX_ENTRIES) refuse("usage", "too many %s entries (max %d)", flag, MAX_ENTRIES);
  list[(*n)++] = p;
}

static void parse_tcp(struct spec *s, const char *v) {
  if (v == NULL) refuse("usage", "--tcp needs none, all or a port list");
  if (strcmp(v, "none") == 0) return;
  if (strcmp(v, "all") == 0) {
    s->tcp_all = 1;
    return;
  }
  const char *p = v;
  while (*p) {
    char *end;
    errno = 0;
    long port = strtol(p, &end, 10);
    if (errno || end == p || port < 1 || port > 65535 || (*end != ',' && *end != '\0'))
      refuse("usage", "--tcp: bad port list \"%s\"", v);
    if (s->n_ports >= MAX_PORTS) refuse("usage", "--tcp: too many ports (max %d)", MAX_PORTS);
    s->ports[s->n_ports++] = (uint16_t)port;
    p = *end == ',' ? end + 1 : end;
  }
  if (s->n_ports == 0) refuse("usage", "--tcp: empty port list");
}

static void parse_args(struct spec *s, int argc, char **argv) {
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    } else if (strcmp(a, "--ro") == 0) {
      push(s->ro, &s->n_ro, a, v);
      i++;
    } else if (strcmp(a, "--rw") == 0) {
      push(s->rw, &s->n_rw, a, v);
      i++;
    } else if (strcmp(a, "--deny") == 0) {
      push(s->deny, &s->n_deny, a, v);
      i++;
    } else if (strcmp(a, "--tmp") == 0) {
      check_path(a, v);
      s->tmp = v;
      i++;
    } else if (strcmp(a, "--tcp") == 0) {
      parse_tcp(s, v);
      i++;
    } else if (strcmp(a, "--cwd") == 0) {
      check_path(a, v);
      s->cwd = v;
      i++;
    } else if (strcmp(a, "--env-fd") == 0) {
      char *end;
      long fd = v ? strtol(v, &end, 10) : -1;
      if (v == NULL || *end != '\0' || fd < 3 || fd > 1023) refuse("usage", "--env-fd needs a descriptor >= 3");
      s->env_fd = (int)fd;
      i++;
    } else {
      refuse("usage", "unknown option \"%s\"", a);
    }
  }
  if (s->tmp == NULL) refuse("usage", "--tmp DIR is required");
  if (i >= argc) refuse("usage", "no command after --");
  s->argv = &argv[i];
}

/* Inherited descriptors could reach files the ruleset forbids (Landlock only checks new opens). */
static void close_inherited_fds(void) {
  if (syscall(__NR_close_range, 3U, ~0U, 0U) == 0) return;
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > (1L << 20)) max = 1L << 20;
  for (long fd = 3; fd < max; fd++) close((int)fd);
}

/* ---- environment ---------------------------------------------------------------------------------------- */

/* Variables that make the dynamic loader or libc load code or data from a path of the caller's choosing, or change
 * how libc behaves. Refused in the helper's own environment and in the command's (defence in depth: the agent
 * never passes them, and the gateway and the agent judge `env` with the command rules). */
static const char *const loader_prefixes[] = {"LD_", "MALLOC_"};
static const char *const loader_names[] = {"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES",
                                           "LOCALDOMAIN", "LOCPATH",    "NIS_PATH",       "NLSPATH",
                                           "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR"};

static int is_loader_variable(const char *entry) {
  size_t n = strcspn(entry, "=");
  for (size_t i = 0; i < sizeof loader_prefixes / sizeof loader_prefixes[0]; i++)
    if (strncmp(entry, loader_prefixes[i], strlen(loader_prefixes[i])) == 0) return 1;
  for (size_t i = 0; i < sizeof loader_names / sizeof loader_names[0]; i++)
    if (strlen(loader_names[i]) == n && strncmp(entry, loader_names[i], n) == 0) return 1;
  return 0;
}

/* Names only, never values (they can be secrets). */
static void check_environment(char **env, const char *whose) {
  for (char **e = env; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (eq == NULL || eq == *e) refuse("usage", "%s environment has a malformed entry", whose);
    if (is_loader_variable(*e))
      refuse("environment refused", "%.*s is not allowed in the %s environment (it changes what the loader runs)",
             (int)(eq - *e > 64 ? 64 : eq - *e), *e, whose);
  }
}

/* Reads NUL-separated NAME=VALUE entries from fd until EOF. The buffer stays allocated: execve needs it. */
static char **read_environment(int fd) {
  char *buf = malloc(MAX_ENV_BYTES + 1);
  char **env = calloc(MAX_ENV_ENTRIES + 1, sizeof *env);
  if (buf == NULL || env == NULL) refuse("setup failed", "out of memory");
  size_t len = 0;
  for (;;) {
    ssize_t r = read(fd, buf + len, MAX_ENV_BYTES + 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) refuse("usage", "--env-fd %d: %s", fd, strerror(errno));
    if (r == 0) break;
    len += (size_t)r;
    if (len > MAX_ENV_BYTES) refuse("usage", "environment larger than %d bytes", MAX_ENV_BYTES);
  }
  close(fd);
  buf[len] = '\0';
  if (len > 0 && buf[len - 1] != '\0') refuse("usage", "environment block must end with NUL");
  int n = 0;
  for (size_t off = 0; off < len;) {
    if (n >= MAX_ENV_ENTRIES) refuse("usage", "more than %d environment entries", MAX_ENV_ENTRIES);
    env[n++] = buf + off;
    off += strlen(buf + off) + 1;
  }
  env[n] = NULL;
  return env;
}

/* The glibc resolver falls back to nothing when UDP is refused; with all TCP allowed it can use TCP instead. */
static char **with_entry(char **env, const char *entry) {
  size_t n = 0;
  while (env[n]) n++;
  char **out = calloc(n + 2, sizeof *out);
  if (out == NULL) refuse("setup failed", "out of memory");
  memcpy(out, env, n * sizeof *out);
  out[n] = (char *)entry;
  return out;
}

/* ---- hiding denied paths ------------------------------------------------------------------------------- */

static int is_within(const char *inner, const char *outer) {
  size_t n = strlen(outer);
  if (strcmp(outer, "/") == 0) return 1;
  return strncmp(inner, outer, n) == 0 && (inner[n] == '/' || inner[n] == '\0');
}

/* A deny path needs a mount only if some grant reaches it (or it covers a grant); elsewhere Landlock denies it. */
static int overlaps_a_grant(const char *deny, const struct spec *s) {
  char real[PATH_MAX];
  for (size_t i = 0; i < sizeof system_grants / sizeof system_grants[0]; i++)
    if (is_within(deny, system_grants[i].path)) return 1;
  for (size_t i = 0; i < sizeof device_grants / sizeof device_grants[0]; i++)
    if (is_within(deny, device_grants[i]) || is_within(device_grants[i], deny)) return 1;
  const char *const *groups[3] = {s->ro, s->rw, &s->tmp};
  const int counts[3] = {s->n_ro, s->n_rw, 1};
  for (int g = 0; g < 3; g++) {
    for (int i = 0; i < counts[g]; i++) {
      const char *grant = groups[g][i];
      if (realpath(grant, real) != NULL) grant = real;
      if (is_within(deny, grant) || is_within(grant, deny)) return 1;
    }
  }
  return 0;
}

static void write_file(const char *path, const char *text, const char *kind) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) refuse(kind, "open %s: %s", path, strerror(errno));
  ssize_t len = (ssize_t)strlen(text);
  if (write(fd, text, (size_t)len) != len) refuse(kind, "write %s: %s", path, strerror(errno));
  close(fd);
}

/* Deny paths that need a mount to hide (they lie inside, or contain, a granted tree), resolved. */
static char hidden[MAX_ENTRIES][PATH_MAX];
static int n_hidden;

static void collect_hidden(const struct spec *s) {
  for (int i = 0; i < s->n_deny; i++) {
    if (realpath(s->deny[i], hidden[n_hidden]) == NULL) {
      if (errno == ENOENT || errno == ENOTDIR) continue; /* nothing there to hide */
      /* The account cannot even reach it (e.g. /root/.ssh for nobody): neither can the command, which runs as
       * the same account without capabilities. Nothing to hide. */
      if (errno == EACCES) continue;
      refuse("setup failed", "deny path \"%s\": %s", s->deny[i], strerror(errno));
    }
    if (overlaps_a_grant(hidden[n_hidden], s)) n_hidden++;
  }
}

/* Which namespaces were entered (before the fork into the sandbox's init). */
static int in_mount_ns, in_pid_ns, in_net_ns;

/*
 * Private namespaces: mount (hiding, our own /proc), PID (the command sees only its own processes), IPC and UTS,
 * and, when no TCP is granted and the kernel allows it, an empty network namespace. As root directly; otherwise inside a user namespace that maps only our own
 * uid and gid (setgroups denied), so the command has no capabilities anywhere that matters. Root must get them
 * (refused otherwise); another account may go without them only when no deny path needs hiding: then Landlock,
 * seccomp and the account's own lack of capabilities are the sandbox (the probe says so).
 */
/* The network namespace is a second layer (seccomp already refuses every inet socket when no TCP is granted):
 * a kernel that refuses only it still gets the others. */
static int unshare_with_net(int flags, int want_net) {
  if (want_net && unshare(flags | CLONE_NEWNET) == 0) {
    in_net_ns = 1;
    return 0;
  }
  return unshare(flags);
}

static void enter_namespaces(const struct spec *s) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  const int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (uid == 0) {
    if (unshare_with_net(flags, no_network(s)) != 0)
      refuse("setup failed", "unshare (mount, pid, ipc, uts namespaces): %s", strerror(errno));
  } else {
    if (unshare_with_net(CLONE_NEWUSER | flags, no_network(s)) != 0) {
      if (n_hidden > 0) refuse("userns unavailable", "unshare(CLONE_NEWUSER|...): %s", strerror(errno));
      return; /* Landlock + seccomp only; nothing needs hiding */
    }
    char map[64];
    write_file("/proc/self/setgroups", "deny", "userns unavailable");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    write_file("/proc/self/uid_map", map, "userns unavailable");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    write_file("/proc/self/gid_map", map, "userns unavailable");
  }
  in_mount_ns = in_pid_ns = 1;
}

/* In the sandbox's init: mounts never propagate back to the host; a /proc of the new PID namespace. */
static void setup_mounts(void) {
  if (!in_mount_ns) return;
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    refuse("setup failed", "make mounts private: %s", strerror(errno));
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
    refuse("setup failed", "mount a private /proc: %s", strerror(errno));
}

static void fd_path(char *buf, size_t n, int fd) { snprintf(buf, n, "/proc/self/fd/%d", fd); }

static void hide_denied(const struct spec *s) {
  if (n_hidden == 0) return;
  if (!in_mount_ns) refuse("userns unavailable", "deny paths need a private mount namespace");
  int n_real = n_hidden;
  char(*real)[PATH_MAX] = hidden;

  /* Open every target inside the new namespace (an fd from before unshare names the old namespace's mounts)
   * and before the staging tmpfs below, so that mounting it cannot change what a path refers to. Symlinks were
   * resolved: the target is what holds the data. */
  int dir_fds[MAX_ENTRIES], file_fds[MAX_ENTRIES];
  int n_dirs = 0, n_files = 0;
  for (int i = 0; i < n_real; i++) {
    int fd = open(real[i], O_PATH | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) refuse("setup failed", "deny path \"%s\": %s", real[i], strerror(errno));
    if (S_ISDIR(st.st_mode))
      dir_fds[n_dirs++] = fd;
    else
      file_fds[n_files++] = fd;
  }
  char target[64];

  if (n_files > 0) {
    /* Staging: a tmpfs mounted over the tmp dir holds one empty file and is then made read-only (mount and
     * superblock); each denied file gets a bind of that file, which inherits the read-only flag. The staging
     * mount is detached afterwards; the binds keep its superblock alive. */
    if (mount("tmpfs", s->tmp, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0700") != 0)
      refuse("setup failed", "staging tmpfs: %s", strerror(errno));
    char empty[PATH_MAX];
    snprintf(empty, sizeof empty, "%s/empty", s->tmp);
    int efd = open(empty, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
    if (efd < 0) refuse("setup failed", "staging file: %s", strerror(errno));
    close(efd);
    if (mount(NULL, s->tmp, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
      refuse("setup failed", "staging read-only: %s", strerror(errno));
    for (int i = 0; i < n_files; i++) {
      fd_path(target, sizeof target, file_fds[i]);
      if (mount(empty, target, NULL, MS_BIND, NULL) != 0) refuse("setup failed", "hide file: %s", strerror(errno));
    }
    if (umount2(s->tmp, MNT_DETACH) != 0) refuse("setup failed", "detach staging tmpfs: %s", strerror(errno));
  }
  for (int i = 0; i < n_dirs; i++) {
    fd_path(target, sizeof target, dir_fds[i]);
    if (mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") != 0)
      refuse("setup failed", "hide directory: %s", strerror(errno));
  }
  for (int i = 0; i < n_files; i++) close(file_fds[i]);
  for (int i = 0; i < n_dirs; i++) close(dir_fds[i]);
}

/* ---- Landlock ------------------------------------------------------------------------------------------- */

static void add_path_rule(int ruleset, const char *path, uint64_t rights, uint64_t handled, int optional) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (optional && (errno == ENOENT || errno == ENOTDIR)) return;
    refuse("setup failed", "grant \"%s\": %s", path, strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) refuse("setup failed", "grant \"%s\": %s", path, strerror(errno));
  struct ll_path_beneath_attr attr = {.allowed_access = rights & handled, .parent_fd = fd};
  if (!S_ISDIR(st.st_mode)) attr.allowed_access &= RIGHTS_FILE;
  if (attr.allowed_access != 0 && syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &attr, 0) != 0)
    refuse("setup failed", "landlock rule for \"%s\": %s", path, strerror(errno));
  close(fd);
}

static void apply_landlock(const struct spec *s, int abi) {
  struct ll_ruleset_attr attr = {0};
  size_t attr_size = sizeof attr.handled_access_fs;
  uint64_t fs = fs_rights_for(abi);
  attr.handled_access_fs = fs;
  if (abi >= NET_ABI) {
    attr_size = offsetof(struct ll_ruleset_attr, scoped);
    if (!s->tcp_all) attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
  }
  if (abi >= SCOPE_ABI) {
    attr_size = sizeof attr;
    attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
  }
  int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
  if (ruleset < 0) refuse("landlock unavailable", "create ruleset: %s", strerror(errno));

  for (size_t i = 0; i < sizeof system_grants / sizeof system_grants[0]; i++)
    add_path_rule(ruleset, system_grants[i].path, system_grants[i].rights, fs, 1);
  for (size_t i = 0; i < sizeof device_grants / sizeof device_grants[0]; i++)
    add_path_rule(ruleset, device_grants[i], RIGHTS_READ | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV, fs, 1);
  for (int i = 0; i < s->n_ro; i++) add_path_rule(ruleset, s->ro[i], RIGHTS_READ | RIGHTS_EXEC, fs, 1);
  for (int i = 0; i < s->n_rw; i++) add_path_rule(ruleset, s->rw[i], RIGHTS_READ | RIGHTS_EXEC | RIGHTS_WRITE, fs, 1);
  add_path_rule(ruleset, s->tmp, RIGHTS_READ | RIGHTS_EXEC | RIGHTS_WRITE, fs, 0);

  for (int i = 0; i < s->n_ports; i++) {
    struct ll_net_port_attr net = {.allowed_access = LL_NET_CONNECT_TCP, .port = s->ports[i]};
    if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &net, 0) != 0)
      refuse("setup failed", "landlock rule for port %u: %s", (unsigned)s->ports[i], strerror(errno));
  }

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) refuse("setup failed", "no_new_privs: %s", strerror(errno));
  if (syscall(__NR_landlock_restrict_self, ruleset, 0U) != 0)
    refuse("setup failed", "landlock restrict_self: %s", strerror(errno));
  close(ruleset);
}

/* ---- capabilities --------------------------------------------------------------------------------------- */

/* Drops every capability for good: bounding set, ambient, inheritable, permitted, effective; and, where we may
 * (root, or inside our user namespace), the securebits that stop exec from giving uid 0 its capabilities back. */
static void drop_capabilities(void) {
  int privileged = prctl(PR_CAPBSET_READ, CAP_SETPCAP, 0, 0, 0) == 1;
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capget, &hdr, data) != 0) refuse("setup failed", "capget: %s", strerror(errno));
  int have_setpcap = (data[0].effective & (1U << CAP_SETPCAP)) != 0;
  if (privileged && have_setpcap) {
    for (int cap = 0; cap < 64; cap++)
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
        refuse("setup failed", "drop capability %d from the bounding set: %s", cap, strerror(errno));
    int bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
               SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) refuse("setup failed", "securebits: %s", strerror(errno));
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    refuse("setup failed", "clear ambient capabilities: %s", strerror(errno));
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &hdr, data) != 0) refuse("setup failed", "capset: %s", strerror(errno));
  /* Check, do not trust. */
  if (syscall(SYS_capget, &hdr, data) != 0) refuse("setup failed", "capget: %s", strerror(errno));
  for (int i = 0; i < 2; i++)
    if (data[i].effective || data[i].permitted || data[i].inheritable)
      refuse("setup failed", "capabilities are still held after dropping them");
  for (int cap = 0; cap < 64; cap++) {
    int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (r < 0) break;
    if (r == 1 && geteuid() == 0) refuse("setup failed", "capability %d is still in the bounding set", cap);
  }
}

/* ---- seccomp -------------------------------------------------------------------------------------------- */

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "letkite-sandbox: add this architecture's AUDIT_ARCH to the seccomp filter"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#define __NR_io_uring_enter 426
#define __NR_io_uring_register 427
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif
#ifndef IPPROTO_TCP
#define IPPROTO_TCP 6
#endif
#define NETLINK_ROUTE_PROTO 0

#define STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JEQ(k, t, f) ((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, t, f))
#define RET_ERRNO(e) STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define RET_ALLOW STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD(off) STMT(BPF_LD | BPF_W | BPF_ABS, off)

/*
 * The socket rules Landlock cannot express (ABI <= 7): no pathname or abstract Unix socket can be created (a
 * connected socketpair can: it reaches nothing), no UDP, raw, packet, vsock, SCTP or any other family; TCP only,
 * and only when some TCP is granted (Landlock then decides which ports); netlink only for routing information.
 * No io_uring (it can create sockets without socket(2)), no kernel keyrings, no TCP Fast Open data (a send with
 * MSG_FASTOPEN connects without connect(2), which Landlock would have checked), no new user namespace. A foreign
 * syscall ABI (x32, i386) is refused outright.
 */
static void apply_seccomp(const struct spec *s) {
  const unsigned inet = no_network(s) ? 0 : 1;
  struct sock_filter f[64];
  int n = 0;
#define ADD(x) (f[n++] = (x))
  ADD(LOAD(offsetof(struct seccomp_data, arch)));
  ADD(JEQ(NATIVE_ARCH, 1, 0));
  ADD(RET_ERRNO(ENOSYS));
  ADD(LOAD(offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
  ADD(((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1))); /* x32 */
  ADD(RET_ERRNO(ENOSYS));
#endif
  /* dispatch: each test jumps to its block below; the offsets are fixed up by position */
  int j_socket = n;
  ADD(JEQ(__NR_socket, 0, 0));
  int j_pair = n;
  ADD(JEQ(__NR_socketpair, 0, 0));
  int j_sendto = n;
  ADD(JEQ(__NR_sendto, 0, 0));
  int j_sendmmsg = n;
  ADD(JEQ(__NR_sendmmsg, 0, 0));
  int j_sendmsg = n;
  ADD(JEQ(__NR_sendmsg, 0, 0));
  int j_unshare = n;
  ADD(JEQ(__NR_unshare, 0, 0));
  int j_clone = n;
  ADD(JEQ(__NR_clone, 0, 0));
  int j_clone3 = n;
  ADD(JEQ(__NR_clone3, 0, 0));
  int j_deny[6];
  const unsigned denied[6] = {__NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
                              __NR_keyctl,         __NR_add_key,        __NR_request_key};
  for (int i = 0; i < 6; i++) {
    j_deny[i] = n;
    ADD(JEQ(denied[i], 0, 0));
  }
  ADD(RET_ALLOW);
  int l_nosys = n;
  ADD(RET_ERRNO(ENOSYS));

  int l_socket = n;
  ADD(LOAD(ARG_LO(0)));
  int j_inet = n;
  ADD(JEQ(AF_INET, 0, 0));
  int j_inet6 = n;
  ADD(JEQ(AF_INET6, 0, 0));
  int j_netlink = n;
  ADD(JEQ(AF_NETLINK, 0, 0));
  ADD(RET_ERRNO(EACCES)); /* AF_UNIX and every other family */
  int l_inet = n;
  if (!inet) ADD(RET_ERRNO(EACCES));
  ADD(LOAD(ARG_LO(1)));
  ADD(STMT(BPF_ALU | BPF_AND | BPF_K, 0xf)); /* SOCK_TYPE_MASK: drop SOCK_NONBLOCK, SOCK_CLOEXEC */
  ADD(JEQ(SOCK_STREAM, 1, 0));
  ADD(RET_ERRNO(EACCES));
  ADD(LOAD(ARG_LO(2)));
  ADD(JEQ(0, 2, 0));
  ADD(JEQ(IPPROTO_TCP, 1, 0));
  ADD(RET_ERRNO(EACCES));
  ADD(RET_ALLOW);
  int l_netlink = n;
  ADD(LOAD(ARG_LO(2)));
  ADD(JEQ(NETLINK_ROUTE_PROTO, 0, 1));
  ADD(RET_ALLOW);
  ADD(RET_ERRNO(EACCES));

  int l_pair = n;
  ADD(LOAD(ARG_LO(0)));
  ADD(JEQ(AF_UNIX, 1, 0));
  ADD(RET_ERRNO(EACCES));
  /* A datagram pair could sendto() a named socket (syslog, journald); a stream or seqpacket pair cannot. */
  ADD(LOAD(ARG_LO(1)));
  ADD(STMT(BPF_ALU | BPF_AND | BPF_K, 0xf));
  ADD(JEQ(SOCK_STREAM, 1, 0));
  ADD(JEQ(SOCK_SEQPACKET, 0, 1));
  ADD(RET_ALLOW);
  ADD(RET_ERRNO(EACCES));

  /* No new user namespace: the kernel surface behind it (capabilities over fresh namespaces) stays closed. clone3
   * passes its flags in memory a filter cannot read: ENOSYS makes libc fall back to clone. */
  int l_userns = n; /* unshare(flags), clone(flags, ...): flags in args[0] on x86_64 and aarch64 */
  ADD(LOAD(ARG_LO(0)));
  ADD(((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1)));
  ADD(RET_ERRNO(EPERM));
  ADD(RET_ALLOW);

  int l_flags3 = n; /* sendto, sendmmsg: flags in args[3] */
  ADD(LOAD(ARG_LO(3)));
  ADD(((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MSG_FASTOPEN, 0, 1)));
  ADD(RET_ERRNO(EOPNOTSUPP));
  ADD(RET_ALLOW);
  int l_flags2 = n; /* sendmsg: flags in args[2] */
  ADD(LOAD(ARG_LO(2)));
  ADD(((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MSG_FASTOPEN, 0, 1)));
  ADD(RET_ERRNO(EOPNOTSUPP));
  ADD(RET_ALLOW);
#undef ADD
  if (n > (int)(sizeof f / sizeof f[0])) refuse("setup failed", "seccomp filter too long");

  /* Fix up the forward jumps (jt of each dispatch test). */
#define TARGET(at, to) (f[at].jt = (unsigned char)((to) - ((at) + 1)))
  TARGET(j_socket, l_socket);
  TARGET(j_pair, l_pair);
  TARGET(j_sendto, l_flags3);
  TARGET(j_sendmmsg, l_flags3);
  TARGET(j_sendmsg, l_flags2);
  for (int i = 0; i < 6; i++) TARGET(j_deny[i], l_nosys);
  TARGET(j_unshare, l_userns);
  TARGET(j_clone, l_userns);
  TARGET(j_clone3, l_nosys);
  TARGET(j_inet, l_inet);
  TARGET(j_inet6, l_inet);
  TARGET(j_netlink, l_netlink);
#undef TARGET

  struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) refuse("setup failed", "no_new_privs: %s", strerror(errno));
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
    refuse("seccomp unavailable", "install the socket filter: %s", strerror(errno));
}

/* ---- processes ------------------------------------------------------------------------------------------ */

static volatile pid_t forward_to;      /* in the helper: init; in init: the command */
static volatile int forward_to_all;    /* in init with a PID namespace: everything in it */

static void forward_signal(int sig) {
  int saved = errno;
  if (forward_to_all)
    kill(-1, sig);
  else if (forward_to > 0)
    kill(forward_to, sig);
  errno = saved;
}

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCONT, SIGWINCH};

static void install_forwarding(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaction(forwarded[i], &sa, NULL);
}

static int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

/* Ends this process the way the command ended: same exit code, or the same signal. */
static void __attribute__((noreturn)) end_like(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
  }
  _exit(SANDBOX_REFUSED);
}

/* The command: every restriction is already in place (inherited from init); enter the cwd, exec. */
static void __attribute__((noreturn)) run_command(const struct spec *s, char **env) {
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) signal(forwarded[i], SIG_DFL);
  if (chdir(s->cwd) != 0) refuse("cwd unavailable", "working directory \"%s\": %s", s->cwd, strerror(errno));
  execvpe(s->argv[0], s->argv, env);
  int err = errno;
  dprintf(2, PREFIX "exec failed: \"%s\": %s\n", s->argv[0], strerror(err));
  _exit(err == ENOENT ? 127 : 126);
}

/* ---- probe ---------------------------------------------------------------------------------------------- */

/* Tries, in a child, what the sandbox needs: the namespaces, a /proc of the new PID namespace, a tmpfs mount. */
static int try_namespaces(int with_userns, int flags) {
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 2);
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare((with_userns ? CLONE_NEWUSER : 0) | flags) != 0) _exit(1);
    if (with_userns) {
      char map[64];
      int fd = open("/proc/self/setgroups", O_WRONLY);
      if (fd < 0 || write(fd, "deny", 4) != 4) _exit(1);
      close(fd);
      snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
      fd = open("/proc/self/uid_map", O_WRONLY);
      if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t)strlen(map)) _exit(1);
      close(fd);
      snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
      fd = open("/proc/self/gid_map", O_WRONLY);
      if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t)strlen(map)) _exit(1);
      close(fd);
    }
    pid_t inner = fork();
    if (inner < 0) _exit(1);
    if (inner == 0) {
      if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) _exit(1);
      if ((flags & CLONE_NEWPID) && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        _exit(1);
      if (mount("tmpfs", "/", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k") != 0) _exit(1);
      _exit(0);
    }
    int st = wait_for(inner);
    _exit(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1);
  }
  int status = wait_for(pid);
  return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Installs a filter like the real one (no_new_privs first) in a child. */
static int try_seccomp(void) {
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    struct sock_filter f[] = {RET_ALLOW};
    struct sock_fprog prog = {.len = 1, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(1);
    _exit(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0 ? 0 : 1);
  }
  int status = wait_for(pid);
  return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static const char *yes(int b) { return b ? "true" : "false"; }

static int probe(void) {
  int abi = ll_abi();
  int landlock = abi >= 1;
  int root = geteuid() == 0;
  const int all = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  int userns = try_namespaces(1, CLONE_NEWNS);
  int mountns = root ? try_namespaces(0, CLONE_NEWNS) : userns;
  int pidns = try_namespaces(!root, all);
  int netns = try_namespaces(!root, all | CLONE_NEWNET);
  int seccomp = try_seccomp();
  /* A static helper has no program interpreter: the kernel gives it no AT_BASE. */
  int is_static = getauxval(AT_BASE) == 0;
  printf("{\"abi\":%d,\"landlock\":%s,\"min_abi\":%d,\"net\":%s,\"scoped\":%s,\"userns\":%s,\"mountns\":%s,"
         "\"pidns\":%s,\"netns\":%s,\"seccomp\":%s,\"static\":%s,\"euid\":%u}\n",
         landlock ? abi : 0, yes(landlock), MIN_ABI, yes(abi >= NET_ABI), yes(abi >= SCOPE_ABI), yes(userns),
         yes(mountns), yes(pidns), yes(netns), yes(seccomp), yes(is_static), (unsigned)geteuid());
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    close_inherited_fds();
    return probe();
  }

  static struct spec s;
  s.env_fd = -1;
  parse_args(&s, argc, argv);

  /* The environment first: the fd is one of those closed next. Values are never printed. */
  check_environment(environ, "helper's");
  char **env = environ;
  if (s.env_fd >= 0) {
    env = read_environment(s.env_fd);
    check_environment(env, "command's");
  }
  close_inherited_fds();

  static char start_dir[PATH_MAX];
  if (s.cwd == NULL) {
    if (getcwd(start_dir, sizeof start_dir) == NULL)
      refuse("cwd unavailable", "the helper's working directory: %s", strerror(errno));
    s.cwd = start_dir;
  }
  /* Hold no reference into a directory that is about to be hidden: the cwd is entered again, by name, after. */
  if (chdir("/") != 0) refuse("setup failed", "chdir /: %s", strerror(errno));

  int abi = ll_abi();
  if (abi < 0) refuse("landlock unavailable", "kernel says %s", strerror(-abi));
  if (abi < MIN_ABI)
    refuse("landlock unavailable", "ABI %d is below the required %d (truncate is not controlled)", abi, MIN_ABI);
  if (!s.tcp_all && abi < NET_ABI)
    refuse("landlock unavailable", "ABI %d cannot restrict TCP (needs %d); allow TCP or upgrade the kernel", abi,
           NET_ABI);

  struct stat st;
  if (stat(s.tmp, &st) != 0 || !S_ISDIR(st.st_mode))
    refuse("usage", "--tmp \"%s\" is not a directory", s.tmp);
  if (s.tcp_all) env = with_entry(env, "RES_OPTIONS=use-vc");

  collect_hidden(&s);
  enter_namespaces(&s);

  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) refuse("setup failed", "pipe: %s", strerror(errno));
  pid_t init = fork();
  if (init < 0) refuse("setup failed", "fork: %s", strerror(errno));
  if (init > 0) {
    /* The helper: pass signals on, wait, end like the command. */
    close(status_pipe[1]);
    forward_to = init;
    install_forwarding();
    int init_status = wait_for(init);
    int command_status;
    ssize_t r;
    do r = read(status_pipe[0], &command_status, sizeof command_status);
    while (r < 0 && errno == EINTR);
    if (r == (ssize_t)sizeof command_status) end_like(command_status);
    if (init_status < 0) refuse("setup failed", "wait: %s", strerror(errno));
    end_like(init_status); /* init refused (125) or was killed before the command ended */
  }

  /* The sandbox's init (PID 1 when a PID namespace was made). */
  close(status_pipe[0]);
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  setup_mounts();
  hide_denied(&s);
  drop_capabilities();
  apply_landlock(&s, abi);
  apply_seccomp(&s);

  pid_t command = fork();
  if (command < 0) refuse("setup failed", "fork: %s", strerror(errno));
  if (command == 0) {
    close(status_pipe[1]);
    run_command(&s, env);
  }
  forward_to = command;
  forward_to_all = in_pid_ns;
  install_forwarding();
  for (;;) {
    int wst = 0;
    pid_t w = waitpid(-1, &wst, 0);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) _exit(SANDBOX_REFUSED);
    if (w == command) {
      ssize_t wr;
      do wr = write(status_pipe[1], &wst, sizeof wst);
      while (wr < 0 && errno == EINTR);
      _exit(0);
    }
  }
}
