/*
 * letkite-sandbox — run one command under a Landlock ruleset, hiding denied paths in a private mount namespace.
 *
 *   letkite-sandbox [--ro PATH]... [--rw PATH]... [--deny PATH]... --tmp DIR
 *                   [--tcp none|all|PORT[,PORT...]] -- PROGRAM [ARG]...
 *   letkite-sandbox --probe          prints {"abi":N,"landlock":bool,"userns":bool,"mountns":bool,...} on stdout
 *
 * The spec is on the command line: it holds only paths and ports, never secrets. The caller sets the command's
 * environment. Fail closed: when any step cannot be applied the command is NOT executed; the helper prints one
 * line "letkite-sandbox: <kind>: <detail>" on stderr and exits with SANDBOX_REFUSED (125). Once the sandbox is in
 * place, a failed exec exits 127 (not found) or 126 (other), like a shell.
 *
 * Order: close inherited fds >= 3, check Landlock, hide denied paths (user + mount namespace), build the ruleset,
 * no_new_privs, restrict self, exec. See ../src/sandbox/README.md for the design.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

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
  char **argv;
};

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

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) refuse("userns unavailable", "open %s: %s", path, strerror(errno));
  ssize_t len = (ssize_t)strlen(text);
  if (write(fd, text, (size_t)len) != len) refuse("userns unavailable", "write %s: %s", path, strerror(errno));
  close(fd);
}

/* Enter a private mount namespace. Not root: a user namespace mapping only our own uid/gid, so after exec the
 * command has no capabilities in it (the uid inside is not 0) and no_new_privs keeps it that way. */
static void enter_private_mount_ns(const char *kind) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (uid == 0) {
    if (unshare(CLONE_NEWNS) != 0) refuse(kind, "unshare(CLONE_NEWNS): %s", strerror(errno));
  } else {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
      refuse(kind, "unshare(CLONE_NEWUSER|CLONE_NEWNS): %s", strerror(errno));
    char map[64];
    write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    write_file("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    write_file("/proc/self/gid_map", map);
  }
  /* Our mounts must never propagate back to the host's namespace. */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    refuse(kind, "make mounts private: %s", strerror(errno));
}

static void fd_path(char *buf, size_t n, int fd) { snprintf(buf, n, "/proc/self/fd/%d", fd); }

static void hide_denied(const struct spec *s) {
  static char real[MAX_ENTRIES][PATH_MAX];
  int n_real = 0;
  for (int i = 0; i < s->n_deny; i++) {
    if (realpath(s->deny[i], real[n_real]) == NULL) {
      if (errno == ENOENT || errno == ENOTDIR) continue; /* nothing there to hide */
      refuse("setup failed", "deny path \"%s\": %s", s->deny[i], strerror(errno));
    }
    if (overlaps_a_grant(real[n_real], s)) n_real++;
  }
  if (n_real == 0) return;

  enter_private_mount_ns("userns unavailable");

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

/* ---- probe ---------------------------------------------------------------------------------------------- */

/* Tries, in a child, exactly what hide_denied needs: a private mount namespace and a tmpfs mount. */
static int try_in_child(int with_userns) {
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 2);
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(with_userns ? CLONE_NEWUSER | CLONE_NEWNS : CLONE_NEWNS) != 0) _exit(1);
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
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) _exit(1);
    if (mount("tmpfs", "/", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k") != 0) _exit(1);
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int probe(void) {
  int abi = ll_abi();
  int landlock = abi >= 1;
  int userns = try_in_child(1);
  int mountns = geteuid() == 0 ? try_in_child(0) : userns;
  printf("{\"abi\":%d,\"landlock\":%s,\"min_abi\":%d,\"net\":%s,\"scoped\":%s,\"userns\":%s,\"mountns\":%s,"
         "\"euid\":%u}\n",
         landlock ? abi : 0, landlock ? "true" : "false", MIN_ABI, abi >= NET_ABI ? "true" : "false",
         abi >= SCOPE_ABI ? "true" : "false", userns ? "true" : "false", mountns ? "true" : "false",
         (unsigned)geteuid());
  return 0;
}

int main(int argc, char **argv) {
  close_inherited_fds();
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) return probe();

  static struct spec s;
  parse_args(&s, argc, argv);

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

  hide_denied(&s);
  apply_landlock(&s, abi);

  execvp(s.argv[0], s.argv);
  int err = errno;
  dprintf(2, PREFIX "exec failed: \"%s\": %s\n", s.argv[0], strerror(err));
  return err == ENOENT ? 127 : 126;
}
