// cairn-enter: starts one command inside a running sandbox, for the Cairn sandbox runner.
//
// The runner (root, on the host) spawns it with:
//   fd 0, 1, 2  the command's stdin, stdout and stderr (pipes of the runner's)
//   fd 3        the request (below), then, in terminal mode, "resize <cols> <rows>\n" lines
//   fd 4        status lines for the runner: "started <host pid>\n" once the command runs,
//               "failed <errno> <message>\n" if it could not, then "exit <code>\n" or
//               "signal <number>\n" when it ends
// and an empty environment. Nothing of the request is on a command line: host users can read
// every process's arguments.
//
// What it does, in order: joins the exec's cgroups (as root, so that the command is limited and
// accounted from its first instruction); drops every supplementary group; enters the sandbox's
// cgroup, ipc, uts, net, pid and mount namespaces and then its user namespace (checking that the
// pid still belongs to that sandbox); forks into the pid namespace. The child empties its
// capability bounding set, becomes the sandbox user with no capabilities, sets no-new-privileges,
// changes to the working directory, installs the sandbox's seccomp filter (the same one
// bubblewrap gave the sandbox's first process) and executes the command. The parent stays
// outside the pid namespace, invisible to the sandbox, and waits: in terminal mode it owns the
// pseudo-terminal, made inside the sandbox's own devpts, and copies bytes between it and the
// runner's pipes.
//
// The request comes on fd 3 in two messages, each "<length>\n" then <length> bytes of
// NUL-terminated fields:
//   where   "cairn-enter-2", target pid, expected user-namespace inode, cgroup count, that many
//           cgroup.procs paths. The helper joins the cgroups and enters the namespaces, then
//           waits: the runner keeps one helper ready per sandbox, so that an exec does not wait
//           for a process to start or for the kernel to move one into a cgroup.
//   what    uid, gid, working directory, terminal ("0", or "<cols>x<rows>"), argument count,
//           that many arguments, variable count, that many NAME=value, filter length in bytes,
//           then the filter (struct sock_filter[]) right after the last NUL.
// If fd 3 ends before the second message (a ready helper that is not needed), it exits 0.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

enum { REQUEST_FD = 3, STATUS_FD = 4, MAX_REQUEST = 4 * 1024 * 1024 };

static void status(const char *format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (length < 0) return;
  if ((size_t)length >= sizeof line) {
    // Cut short, but still one line: the runner reads line by line.
    length = sizeof line - 1;
    line[length - 1] = '\n';
  }
  ssize_t ignored = write(STATUS_FD, line, (size_t)length);
  (void)ignored;
}

// In the child: the close-on-exec pipe that tells the parent whether the exec happened.
static int report_fd = -1;

// A failure before the command could start: said on the status fd, and the exit code says it.
static void die(const char *what) {
  int error = errno;
  status("failed %d %s: %s\n", error, what, strerror(error));
  if (report_fd >= 0) {
    // The parent must not say "started": the failure is already said.
    int said = -1;
    ssize_t ignored = write(report_fd, &said, sizeof said);
    (void)ignored;
  }
  _exit(125);
}

static void die_message(const char *message) {
  status("failed 0 %s\n", message);
  _exit(125);
}

// ---- the request ---------------------------------------------------------------------------

struct request {
  pid_t target;
  unsigned long long userns_inode;
  uid_t uid;
  gid_t gid;
  const char *cwd;
  int terminal;
  unsigned short cols, rows;
  int cgroup_count;
  char **cgroups;
  char **argv;
  char **envp;
  struct sock_fprog filter;
};

static char *buffer;
static size_t buffer_length, cursor;

static int read_exactly(int fd, char *into, size_t length) {
  size_t done = 0;
  while (done < length) {
    ssize_t got = read(fd, into + done, length - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    done += (size_t)got;
  }
  return 0;
}

static const char *field(void) {
  if (cursor >= buffer_length) die_message("the request ends too early");
  const char *start = buffer + cursor;
  const char *end = memchr(start, '\0', buffer_length - cursor);
  if (end == NULL) die_message("the request has an unterminated field");
  cursor = (size_t)(end - buffer) + 1;
  return start;
}

static unsigned long long number(const char *name) {
  const char *text = field();
  char *end;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') {
    char message[128];
    snprintf(message, sizeof message, "the request's %s is not a number", name);
    die_message(message);
  }
  return value;
}

static char **strings(unsigned long long count) {
  if (count > 65536) die_message("the request has too many strings");
  char **list = calloc(count + 1, sizeof *list);
  if (list == NULL) die("allocate the request");
  for (unsigned long long index = 0; index < count; index++) list[index] = (char *)field();
  return list;
}

// Reads one message into `buffer`; returns 0 if fd 3 ended before it began.
static int read_message(void) {
  char header[32];
  size_t used = 0;
  // The length line, a byte at a time: what follows it belongs to the body.
  while (used < sizeof header - 1) {
    if (read_exactly(REQUEST_FD, header + used, 1) != 0) {
      if (used == 0) return 0;
      die_message("the request's length line is cut short");
    }
    if (header[used] == '\n') break;
    used++;
  }
  header[used] = '\0';
  unsigned long long length = strtoull(header, NULL, 10);
  if (length == 0 || length > MAX_REQUEST) die_message("the request's length is wrong");
  buffer = malloc(length);
  if (buffer == NULL) die("allocate the request");
  if (read_exactly(REQUEST_FD, buffer, length) != 0) die_message("the request is cut short");
  buffer_length = length;
  cursor = 0;
  return 1;
}

static void read_where(struct request *request) {
  if (!read_message()) die_message("no request on fd 3");
  if (strcmp(field(), "cairn-enter-2") != 0) die_message("the request's version is unknown");
  request->target = (pid_t)number("pid");
  request->userns_inode = number("user namespace inode");
  request->cgroup_count = (int)number("cgroup count");
  request->cgroups = strings((unsigned long long)request->cgroup_count);
}

// 0 when the runner let this ready helper go unused.
static int read_what(struct request *request) {
  if (!read_message()) return 0;
  request->uid = (uid_t)number("uid");
  request->gid = (gid_t)number("gid");
  request->cwd = field();
  const char *terminal = field();
  request->terminal = strcmp(terminal, "0") != 0;
  if (request->terminal) {
    unsigned int cols, rows;
    if (sscanf(terminal, "%ux%u", &cols, &rows) != 2 || cols == 0 || rows == 0 || cols > 65535 ||
        rows > 65535) {
      die_message("the request's terminal size is wrong");
    }
    request->cols = (unsigned short)cols;
    request->rows = (unsigned short)rows;
  }
  request->argv = strings(number("argument count"));
  if (request->argv[0] == NULL) die_message("the request has no command");
  request->envp = strings(number("variable count"));
  unsigned long long filter_bytes = number("filter length");
  if (filter_bytes == 0 || filter_bytes % sizeof(struct sock_filter) != 0 ||
      filter_bytes / sizeof(struct sock_filter) > BPF_MAXINSNS ||
      cursor + filter_bytes != buffer_length) {
    die_message("the request's seccomp filter is malformed");
  }
  request->filter.len = (unsigned short)(filter_bytes / sizeof(struct sock_filter));
  request->filter.filter = (struct sock_filter *)(buffer + cursor);
  return 1;
}

// ---- entering the sandbox -------------------------------------------------------------------

static void join_cgroups(const struct request *request) {
  char pid[32];
  int length = snprintf(pid, sizeof pid, "%d", getpid());
  for (int index = 0; index < request->cgroup_count; index++) {
    int fd = open(request->cgroups[index], O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, pid, (size_t)length) != length) die("join the exec's cgroup");
    close(fd);
  }
}

// Opened relative to one /proc/<pid> directory, so every namespace is of the same process:
// the one whose user namespace is checked below, not one that took over its pid meanwhile.
static int open_namespace(int process, const char *name) {
  char path[32];
  snprintf(path, sizeof path, "ns/%s", name);
  int fd = openat(process, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("open the sandbox's namespaces (has the sandbox stopped?)");
  return fd;
}

static void enter_namespaces(const struct request *request) {
  // Every namespace is opened before any is entered: once in the mount namespace, /proc/<pid>
  // would be the sandbox's /proc.
  static const struct {
    const char *name;
    int type;
  } order[] = {
      {"cgroup", CLONE_NEWCGROUP}, {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS},
      {"net", CLONE_NEWNET},       {"pid", CLONE_NEWPID}, {"mnt", CLONE_NEWNS},
  };
  enum { count = sizeof order / sizeof order[0] };
  char path[32];
  snprintf(path, sizeof path, "/proc/%d", request->target);
  int process = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (process < 0) die("find the sandbox's first process (has the sandbox stopped?)");
  int user = open_namespace(process, "user");
  struct stat identity;
  // A pid that outlived its sandbox and was reused must not lead anywhere else.
  if (fstat(user, &identity) != 0 || identity.st_ino != request->userns_inode) {
    die_message("the sandbox's first process is gone (its pid now belongs to another process)");
  }
  int fds[count];
  for (int index = 0; index < count; index++) fds[index] = open_namespace(process, order[index].name);
  close(process);
  // As root of the host first; the sandbox's user namespace last, which leaves root behind.
  for (int index = 0; index < count; index++) {
    if (setns(fds[index], order[index].type) != 0) die("enter the sandbox's namespaces");
    close(fds[index]);
  }
  if (setns(user, CLONE_NEWUSER) != 0) die("enter the sandbox's user namespace");
  close(user);
}

// ---- the child: the command ---------------------------------------------------------------

static void become_sandbox_user(const struct request *request) {
  // While this process still holds CAP_SETPCAP in the sandbox's user namespace.
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) die("empty the bounding set");
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    die("clear the ambient capabilities");
  }
  if (setresgid(request->gid, request->gid, request->gid) != 0) die("become the sandbox's group");
  if (setresuid(request->uid, request->uid, request->uid) != 0) die("become the sandbox's user");
  // Whatever the uid change left: no capability at all, and none to gain by executing a file.
  struct {
    uint32_t version;
    int pid;
  } header = {0x20080522, 0};
  struct {
    uint32_t effective, permitted, inheritable;
  } none[2] = {{0, 0, 0}, {0, 0, 0}};
  if (syscall(SYS_capset, &header, none) != 0) die("drop every capability");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("set no-new-privileges");
}

static void default_signals(void) {
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, NULL);
  for (int signal_number = 1; signal_number < NSIG; signal_number++) {
    signal(signal_number, SIG_DFL);
  }
}

// Closes every fd above 2 but `keep`: close_range where the kernel has it (5.9), else one by one.
static void close_all_but(int keep) {
  if (syscall(SYS_close_range, 3, keep - 1, 0) == 0 &&
      syscall(SYS_close_range, keep + 1, ~0U, 0) == 0) {
    return;
  }
  struct rlimit limit;
  int highest = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 1048576
                    ? (int)limit.rlim_cur
                    : 1048576;
  for (int fd = 3; fd < highest; fd++) {
    if (fd != keep) close(fd);
  }
}

// Runs in the sandbox's pid namespace. `report` is a close-on-exec pipe: a successful exec
// closes it empty; a failure writes its errno first.
static void run_command(const struct request *request, int terminal_fd, int report) {
  report_fd = report;
  default_signals();
  if (setsid() < 0) die("start a session");
  if (terminal_fd >= 0) {
    // The first terminal a session leader opens becomes its controlling terminal.
    const char *name = ptsname(terminal_fd);
    if (name == NULL) die("name the terminal");
    int slave = open(name, O_RDWR | O_NOCTTY);
    if (slave < 0) die("open the terminal");
    if (ioctl(slave, TIOCSCTTY, 0) != 0) die("take the terminal");
    if (dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0) die("use the terminal");
    if (slave > 2) close(slave);
    close(terminal_fd);
  }
  become_sandbox_user(request);
  if (chdir(request->cwd) != 0) {
    int error = errno;
    status("failed %d cannot change to %s: %s\n", error, request->cwd, strerror(error));
    int said = -1;
    ssize_t ignored = write(report, &said, sizeof said);
    (void)ignored;
    _exit(126);
  }
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &request->filter, 0, 0) != 0) {
    die("install the seccomp filter");
  }
  extern char **environ;
  environ = request->envp;
  // Nothing of the runner's but stdio and the report pipe (close-on-exec) crosses the exec.
  close_all_but(report);
  execvp(request->argv[0], request->argv);
  int error = errno;
  dprintf(2, "cairn: cannot run %s: %s\n", request->argv[0], strerror(error));
  ssize_t ignored = write(report, &error, sizeof error);
  (void)ignored;
  _exit(error == ENOENT ? 127 : 126);
}

// ---- the parent: waiting, and the terminal ------------------------------------------------

static void write_all(int fd, const char *bytes, size_t length) {
  while (length > 0) {
    ssize_t written = write(fd, bytes, length);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    bytes += written;
    length -= (size_t)written;
  }
}

// Applies the "resize <cols> <rows>" lines that arrived on fd 3.
static void read_controls(int master, char *pending, size_t *used, int *open_control) {
  ssize_t got = read(REQUEST_FD, pending + *used, 255 - *used);
  if (got <= 0) {
    if (got == 0 || errno != EINTR) *open_control = 0;
    return;
  }
  *used += (size_t)got;
  pending[*used] = '\0';
  char *line;
  while ((line = memchr(pending, '\n', *used)) != NULL) {
    *line = '\0';
    unsigned int cols, rows;
    if (sscanf(pending, "resize %u %u", &cols, &rows) == 2 && cols > 0 && rows > 0 &&
        cols <= 65535 && rows <= 65535) {
      struct winsize size = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
      ioctl(master, TIOCSWINSZ, &size);
    }
    size_t consumed = (size_t)(line - pending) + 1;
    memmove(pending, line + 1, *used - consumed);
    *used -= consumed;
  }
  if (*used == 255) *used = 0;  // A line that long is not a control line.
}

// Copies stdin to the terminal and the terminal to stdout until the command has exited and
// the terminal has nothing more to say. The master is non-blocking: input the command does not
// read waits here (at most one buffer of it, then stdin is not read), so a command that writes
// without reading can never block the relay.
static void relay_terminal(int master, pid_t child) {
  int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
  if (pidfd < 0) die("watch the command (pidfd_open needs Linux 5.3)");
  if (fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK) != 0) die("set up the terminal");
  int open_input = 1, open_control = 1, open_master = 1, exited = 0;
  char pending[256];
  size_t used = 0;
  static char input[65536];
  size_t input_length = 0;
  static char bytes[65536];
  for (;;) {
    struct pollfd fds[4] = {
        {.fd = open_master ? master : -1, .events = POLLIN | (input_length > 0 ? POLLOUT : 0)},
        {.fd = open_input && input_length == 0 ? 0 : -1, .events = POLLIN},
        {.fd = open_control ? REQUEST_FD : -1, .events = POLLIN},
        {.fd = exited ? -1 : pidfd, .events = POLLIN},
    };
    // Once the command has exited, whatever it wrote is already in the terminal.
    if (poll(fds, 4, exited ? 0 : -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    int drained = 1;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t got = read(master, bytes, sizeof bytes);
      if (got > 0) {
        write_all(1, bytes, (size_t)got);
        drained = 0;
      } else if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
        drained = 0;
      } else {
        // EIO: no process holds the terminal any more (the command may still run, without
        // it, as after nohup). Nothing more will come out of it.
        open_master = 0;
      }
    }
    if (open_master && input_length > 0 && (fds[0].revents & POLLOUT)) {
      ssize_t written = write(master, input, input_length);
      if (written > 0) {
        memmove(input, input + written, input_length - (size_t)written);
        input_length -= (size_t)written;
      } else if (written < 0 && errno != EAGAIN && errno != EINTR) {
        input_length = 0;
      }
    }
    if (!open_master) input_length = 0;
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t got = read(0, input, sizeof input);
      if (got > 0) input_length = (size_t)got;
      else if (got == 0 || errno != EINTR) open_input = 0;
    }
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) read_controls(master, pending, &used, &open_control);
    if (fds[3].revents & POLLIN) exited = 1;
    if (exited && (drained || !open_master)) return;
  }
}

// The runner's death ends this process; the command dies with its sandbox. The kernel clears
// the parent-death signal at every change of credentials: entering the sandbox's user namespace
// (owned by the sandbox's host uid, not by root, so its capabilities count as new ones) and
// taking the sandbox user's filesystem ids for a terminal. It is set again after each, and a
// runner that died before it was set is seen as another parent.
static void die_with(pid_t runner) {
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != runner) _exit(125);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  // The name a process of the sandbox may read in /proc while this one forks into it.
  prctl(PR_SET_NAME, "cairn-enter", 0, 0, 0);
  pid_t runner = getppid();
  die_with(runner);
  struct request request = {0};
  read_where(&request);
  join_cgroups(&request);
  // Host root's supplementary groups must not follow it into the sandbox.
  if (setgroups(0, NULL) != 0) die("drop the supplementary groups");
  enter_namespaces(&request);
  die_with(runner);
  if (!read_what(&request)) return 0;

  int master = -1;
  if (request.terminal) {
    // The sandbox's own devpts: the terminal and its process group belong to the sandbox, and
    // the terminal to the sandbox user (devpts gives it to the opener's filesystem uid). This
    // process needs no other file access as root from here on.
    setfsgid(request.gid);
    setfsuid(request.uid);
    // setfs*id() says nothing of failure but the old id: ask again.
    if ((gid_t)setfsgid((gid_t)-1) != request.gid || (uid_t)setfsuid((uid_t)-1) != request.uid) {
      die_message("cannot act as the sandbox user");
    }
    die_with(runner);
    master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || unlockpt(master) != 0) die("make a terminal in the sandbox");
    struct winsize size = {.ws_row = request.rows, .ws_col = request.cols};
    if (ioctl(master, TIOCSWINSZ, &size) != 0) die("size the terminal");
  }
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) die("make a pipe");
  pid_t child = fork();
  if (child < 0) die("fork into the sandbox");
  if (child == 0) {
    close(report[0]);
    run_command(&request, master, report[1]);
  }
  close(report[1]);
  // Signals meant for the command reach every process of its cgroup, this one too.
  for (int signal_number = 1; signal_number < NSIG; signal_number++) {
    if (signal_number != SIGKILL && signal_number != SIGSTOP && signal_number != SIGCHLD) {
      signal(signal_number, SIG_IGN);
    }
  }
  int error = 0;
  ssize_t got;
  do got = read(report[0], &error, sizeof error);
  while (got < 0 && errno == EINTR);
  close(report[0]);
  if (got > 0) {
    if (error > 0) status("failed %d cannot run %s: %s\n", error, request.argv[0], strerror(error));
  } else {
    status("started %d\n", child);
  }
  if (master >= 0) relay_terminal(master, child);
  // The command has the pipes (in terminal mode, the terminal): this process holds no copy
  // that would keep them open after it.
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
  }
  int wait_status;
  while (waitpid(child, &wait_status, 0) < 0) {
    if (errno != EINTR) die("wait for the command");
  }
  if (WIFSIGNALED(wait_status)) {
    status("signal %d\n", WTERMSIG(wait_status));
    return 128 + WTERMSIG(wait_status);
  }
  status("exit %d\n", WEXITSTATUS(wait_status));
  return WEXITSTATUS(wait_status);
}
