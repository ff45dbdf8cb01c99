// cairn-launch: starts a sandbox's bubblewrap for the Cairn sandbox runner, and ends it, with
// everything it left, once the runner is gone.
//
// bubblewrap's --die-with-parent gives each of its processes a parent-death signal that the
// process sets itself, some time after it started, and never checks: the sandbox's first
// process (its pid 1, cloned by bubblewrap) sets it only once the sandbox is made. A runner
// killed in between (a service stopped with SIGKILL while it starts a sandbox ahead) takes
// bubblewrap with it and leaves that pid 1 and the sandbox's command running for ever, children
// of init. This helper closes the gap. It is bubblewrap's parent, and a child subreaper, so that
// whatever is orphaned below it becomes its child; and it learns that the runner is gone from a
// pipe, which the kernel closes whenever and however the runner ends: there is no moment at
// which the runner can die unseen.
//
// The runner (root, on the host) spawns it with:
//   argv     the command to run (the shell that joins the sandbox's cgroup and runs bwrap)
//   fd 0     a pipe the runner never writes to: its end means the runner is gone
//   fd 2     the command's stderr, and this helper's
//   fd 3…    the command's own (bwrap's info, arguments, seccomp filter, files), passed on
// It runs the command with /dev/null as stdin, in this process's group. When the command
// exits, the runner is gone, or SIGTERM, SIGINT or SIGHUP comes, it SIGKILLs the command and
// every process reparented to it, waits until none is left, and exits as the command did (its
// exit code, or the same signal).

#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void fail(const char *what) {
  fprintf(stderr, "cairn-launch: cannot %s: %s\n", what, strerror(errno));
  exit(125);
}

// The parent pid in /proc/<pid>/stat: the field after the command's closing parenthesis.
static pid_t parent_of(pid_t pid) {
  char path[64], text[512];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t length = read(fd, text, sizeof text - 1);
  close(fd);
  if (length <= 0) return -1;
  text[length] = '\0';
  char *end = strrchr(text, ')');
  int parent;
  if (end == NULL || sscanf(end + 1, " %*c %d", &parent) != 1) return -1;
  return parent;
}

// SIGKILLs every child of this process: the command, and whatever was reparented here. The
// kernel lists them in /proc/<pid>/task/<pid>/children; without that file, /proc is searched.
static void kill_children(void) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/children", getpid());
  FILE *list = fopen(path, "re");
  if (list != NULL) {
    int pid;
    while (fscanf(list, "%d", &pid) == 1) kill(pid, SIGKILL);
    fclose(list);
    return;
  }
  DIR *proc = opendir("/proc");
  if (proc == NULL) return;
  pid_t self = getpid();
  struct dirent *entry;
  while ((entry = readdir(proc)) != NULL) {
    if (!isdigit((unsigned char)entry->d_name[0])) continue;
    pid_t pid = (pid_t)atoi(entry->d_name);
    if (parent_of(pid) == self) kill(pid, SIGKILL);
  }
  closedir(proc);
}

// Reaps every child that has ended; `status` gets the command's. 0 once no child is left.
static int reap(pid_t command, int *status, int *ended) {
  for (;;) {
    int each;
    pid_t pid = waitpid(-1, &each, WNOHANG);
    if (pid > 0) {
      if (pid == command) {
        *status = each;
        *ended = 1;
      }
      continue;
    }
    if (pid < 0 && errno == EINTR) continue;
    return !(pid < 0 && errno == ECHILD);
  }
}

// Closes every fd from 3 up: close_range where the kernel has it (5.9), else one by one.
static void close_from_3(void) {
  if (syscall(SYS_close_range, 3, ~0U, 0) == 0) return;
  struct rlimit limit;
  int highest = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 1048576
                    ? (int)limit.rlim_cur
                    : 1048576;
  for (int fd = 3; fd < highest; fd++) close(fd);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: cairn-launch <command> [argument...]\n");
    return 2;
  }
  prctl(PR_SET_NAME, "cairn-launch", 0, 0, 0);
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) fail("become a child subreaper");
  // Blocked before the fork, read from a signalfd after it: none is lost in between.
  sigset_t handled, previous;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  sigaddset(&handled, SIGTERM);
  sigaddset(&handled, SIGINT);
  sigaddset(&handled, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &handled, &previous) != 0) fail("block signals");

  pid_t command = fork();
  if (command < 0) fail("fork");
  if (command == 0) {
    sigprocmask(SIG_SETMASK, &previous, NULL);
    // The runner's pipe stays here: nothing of the sandbox holds it.
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0) {
      fprintf(stderr, "cairn-launch: cannot open /dev/null: %s\n", strerror(errno));
      _exit(125);
    }
    if (null > 0) close(null);
    execvp(argv[1], argv + 1);
    fprintf(stderr, "cairn-launch: cannot run %s: %s\n", argv[1], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  // The command's fds are its own: a copy here would keep its pipes open after it.
  close_from_3();
  int signals = signalfd(-1, &handled, SFD_CLOEXEC);
  if (signals < 0) {
    // Without it this process cannot wait for both the runner and the command: it ends both.
    fprintf(stderr, "cairn-launch: cannot make a signalfd: %s\n", strerror(errno));
    kill(command, SIGKILL);
  }

  int status = 0, ended = 0, stopping = signals < 0;
  while (!ended && !stopping) {
    struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = signals, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) {
      char bytes[256];
      ssize_t got = read(0, bytes, sizeof bytes);
      // End of file: the runner is gone (it never writes; what comes is ignored).
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) stopping = 1;
    }
    if (fds[1].revents & POLLIN) {
      struct signalfd_siginfo info;
      if (read(signals, &info, sizeof info) == sizeof info && info.ssi_signo != SIGCHLD) {
        stopping = 1;
      }
      reap(command, &status, &ended);
    }
  }

  // The end: the command, and every process orphaned below it (reparented here as it dies),
  // until no child is left.
  for (;;) {
    kill_children();
    if (!reap(command, &status, &ended)) break;
    struct pollfd fds[1] = {{.fd = signals, .events = POLLIN}};
    // A signalfd tells of each child's end; where there is none, a tenth of a second.
    if (poll(fds, signals < 0 ? 0 : 1, 100) > 0) {
      struct signalfd_siginfo info;
      while (read(signals, &info, sizeof info) < 0 && errno == EINTR) {
      }
    }
  }

  if (ended && WIFSIGNALED(status)) {
    // As the command ended: the same signal, without a core file of this process.
    int number = WTERMSIG(status);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(number, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, number);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    raise(number);
    return 128 + number;
  }
  return ended ? WEXITSTATUS(status) : 125;
}
