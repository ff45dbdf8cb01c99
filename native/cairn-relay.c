// cairn-relay: the door of a sandbox's egress proxy, for the Cairn sandbox runner.
//
// A sandbox has only a loopback interface and no route out. Its processes reach the egress
// proxy at 127.0.0.1:<port>, with nothing needed in the sandbox's template (no Node, no
// socat): this program, started by the runner (root, on the host) with
//   cairn-relay <sandbox pid> <user namespace inode> <port> <unix socket path>
// enters the network namespace of the sandbox's first process (after checking that the pid
// still belongs to that sandbox, by its user namespace's inode), listens on 127.0.0.1:<port>
// there, drops to the unprivileged uid and gid 65534, writes "listening\n" on stdout, and then
// relays every connection to the runner's proxy on <unix socket path>, each in a child process
// that copies bytes both ways until both directions have ended. Nothing here reads the bytes.
// It stays in the host's mount and pid namespaces: the sandbox cannot see or signal it. It runs
// in a process group of its own, which the runner kills when the sandbox stops, and dies with
// the runner.

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

// At most this many connections are relayed at once (a process each); more wait in the
// listen backlog. Each relay process is in the sandbox's cgroup too, under its pids limit.
#define MAX_CONNECTIONS 128

static volatile sig_atomic_t children = 0;

static void reap(int signal_number) {
  (void)signal_number;
  int saved = errno;
  while (waitpid(-1, NULL, WNOHANG) > 0) children--;
  errno = saved;
}

static void die(const char *what) {
  fprintf(stderr, "cairn-relay: cannot %s: %s\n", what, strerror(errno));
  exit(1);
}

static void write_all(int fd, const char *bytes, size_t length) {
  while (length > 0) {
    ssize_t written = write(fd, bytes, length);
    if (written < 0) {
      if (errno == EINTR) continue;
      return;
    }
    bytes += written;
    length -= (size_t)written;
  }
}

// Copies both ways between the sandbox's connection and the proxy's, passing on each half-close.
static void relay(int client, const char *socket_path) {
  int upstream = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (upstream < 0) _exit(1);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  strncpy(address.sun_path, socket_path, sizeof address.sun_path - 1);
  if (connect(upstream, (struct sockaddr *)&address, sizeof address) != 0) _exit(1);
  struct pollfd fds[2] = {{.fd = client, .events = POLLIN}, {.fd = upstream, .events = POLLIN}};
  int open_directions = 2;
  static char buffer[65536];
  while (open_directions > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int side = 0; side < 2; side++) {
      if (fds[side].fd < 0 || (fds[side].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      int to = side == 0 ? upstream : client;
      ssize_t got = read(fds[side].fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        shutdown(to, SHUT_WR);
        fds[side].fd = -1;
        open_directions--;
        continue;
      }
      write_all(to, buffer, (size_t)got);
    }
  }
  _exit(0);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: cairn-relay <pid> <user namespace inode> <port> <unix socket>\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_NAME, "cairn-relay", 0, 0, 0);
  // The runner's death ends this process; a runner that died before the signal was set is
  // seen as another parent.
  pid_t runner = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != runner) return 1;
  if (setpgid(0, 0) != 0) die("start a process group");
  const char *pid = argv[1];
  unsigned long long expected = strtoull(argv[2], NULL, 10);
  int port = atoi(argv[3]);
  const char *socket_path = argv[4];
  if (port < 1 || port > 65535 || strlen(socket_path) >= sizeof ((struct sockaddr_un *)0)->sun_path) {
    fprintf(stderr, "cairn-relay: bad port or socket path\n");
    return 2;
  }

  char path[64];
  snprintf(path, sizeof path, "/proc/%s/ns/net", pid);
  int net = open(path, O_RDONLY | O_CLOEXEC);
  if (net < 0) die("open the sandbox's network namespace");
  snprintf(path, sizeof path, "/proc/%s/ns/user", pid);
  struct stat user;
  if (stat(path, &user) != 0) die("read the sandbox's user namespace");
  if ((unsigned long long)user.st_ino != expected) {
    fprintf(stderr, "cairn-relay: process %s no longer belongs to the sandbox\n", pid);
    return 1;
  }
  if (setns(net, CLONE_NEWNET) != 0) die("enter the sandbox's network namespace");
  close(net);

  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) die("make a socket");
  int yes = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  struct sockaddr_in local = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&local, sizeof local) != 0) die("listen on 127.0.0.1");
  if (listen(listener, 128) != 0) die("listen on 127.0.0.1");

  // Nothing from here on needs root.
  if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) die("drop privileges");
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  // Changing credentials cleared the parent-death signal: set it again, and check the runner
  // did not die meanwhile.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != runner) return 1;
  // Children are reaped and counted as they end.
  struct sigaction on_child = {.sa_handler = reap, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
  sigemptyset(&on_child.sa_mask);
  sigaction(SIGCHLD, &on_child, NULL);
  sigset_t child_signal, unblocked;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child_signal, &unblocked);
  sigdelset(&unblocked, SIGCHLD);
  write_all(1, "listening\n", 10);

  pid_t self = getpid();
  for (;;) {
    // At the cap, wait for a relay to end: new connections wait in the backlog meanwhile.
    while (children >= MAX_CONNECTIONS) sigsuspend(&unblocked);
    sigprocmask(SIG_SETMASK, &unblocked, NULL);
    int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    sigprocmask(SIG_BLOCK, &child_signal, NULL);
    if (client < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) continue;
      die("accept a connection");
    }
    pid_t child = fork();
    if (child == 0) {
      close(listener);
      // A connection's process ends with the relay, also one that died before this was set.
      prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      if (getppid() != self) _exit(1);
      signal(SIGCHLD, SIG_DFL);
      sigprocmask(SIG_SETMASK, &unblocked, NULL);
      relay(client, socket_path);
    }
    // Past the sandbox's pids limit the fork fails: that connection is closed, the rest go on.
    if (child > 0) children++;
    close(client);
  }
}
