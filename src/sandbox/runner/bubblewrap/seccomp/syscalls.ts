/** The architectures the runner builds a seccomp filter for. */
export type SeccompArch = "x86_64" | "aarch64";

/** A syscall's number on each architecture; absent where the architecture lacks it. */
type Numbers = Readonly<Partial<Record<SeccompArch, number>>>;

/**
 * Syscalls a sandbox may not make: what Docker's default profile refuses to a container
 * without capabilities (kernel keyrings, io_uring, userfaultfd, BPF, perf, namespaces, mounts,
 * modules, tracing other processes, clocks, swap, reboot, NUMA placement, obsolete calls), all
 * answered EPERM. The numbers are checked against libseccomp's tables by seccomp.test.ts.
 */
export const deniedSyscalls: Readonly<Record<string, Numbers>> = {
  // Kernel keyrings: shared with the host, never namespaced.
  add_key: { x86_64: 248, aarch64: 217 },
  keyctl: { x86_64: 250, aarch64: 219 },
  request_key: { x86_64: 249, aarch64: 218 },
  // Large kernel attack surfaces.
  io_uring_setup: { x86_64: 425, aarch64: 425 },
  io_uring_enter: { x86_64: 426, aarch64: 426 },
  io_uring_register: { x86_64: 427, aarch64: 427 },
  userfaultfd: { x86_64: 323, aarch64: 282 },
  bpf: { x86_64: 321, aarch64: 280 },
  perf_event_open: { x86_64: 298, aarch64: 241 },
  // Namespaces and mounts: the sandbox's shape is the runner's to make.
  unshare: { x86_64: 272, aarch64: 97 },
  setns: { x86_64: 308, aarch64: 268 },
  mount: { x86_64: 165, aarch64: 40 },
  umount2: { x86_64: 166, aarch64: 39 },
  pivot_root: { x86_64: 155, aarch64: 41 },
  chroot: { x86_64: 161, aarch64: 51 },
  fsopen: { x86_64: 430, aarch64: 430 },
  fsconfig: { x86_64: 431, aarch64: 431 },
  fsmount: { x86_64: 432, aarch64: 432 },
  fspick: { x86_64: 433, aarch64: 433 },
  move_mount: { x86_64: 429, aarch64: 429 },
  open_tree: { x86_64: 428, aarch64: 428 },
  mount_setattr: { x86_64: 442, aarch64: 442 },
  // File handles bypass the path checks of a mount.
  name_to_handle_at: { x86_64: 303, aarch64: 264 },
  open_by_handle_at: { x86_64: 304, aarch64: 265 },
  // Other processes' memory and files.
  ptrace: { x86_64: 101, aarch64: 117 },
  process_vm_readv: { x86_64: 310, aarch64: 270 },
  process_vm_writev: { x86_64: 311, aarch64: 271 },
  process_madvise: { x86_64: 440, aarch64: 440 },
  pidfd_getfd: { x86_64: 438, aarch64: 438 },
  kcmp: { x86_64: 312, aarch64: 272 },
  // Kernel modules and kernels.
  init_module: { x86_64: 175, aarch64: 105 },
  finit_module: { x86_64: 313, aarch64: 273 },
  delete_module: { x86_64: 176, aarch64: 106 },
  kexec_load: { x86_64: 246, aarch64: 104 },
  kexec_file_load: { x86_64: 320, aarch64: 294 },
  // The host's clock, swap, accounting, console and power.
  settimeofday: { x86_64: 164, aarch64: 170 },
  clock_settime: { x86_64: 227, aarch64: 112 },
  clock_adjtime: { x86_64: 305, aarch64: 266 },
  swapon: { x86_64: 167, aarch64: 224 },
  swapoff: { x86_64: 168, aarch64: 225 },
  acct: { x86_64: 163, aarch64: 89 },
  reboot: { x86_64: 169, aarch64: 142 },
  syslog: { x86_64: 103, aarch64: 116 },
  vhangup: { x86_64: 153, aarch64: 58 },
  sethostname: { x86_64: 170, aarch64: 161 },
  setdomainname: { x86_64: 171, aarch64: 162 },
  quotactl: { x86_64: 179, aarch64: 60 },
  quotactl_fd: { x86_64: 443, aarch64: 443 },
  fanotify_init: { x86_64: 300, aarch64: 262 },
  lookup_dcookie: { x86_64: 212, aarch64: 18 },
  // Memory placement across the host's NUMA nodes.
  mbind: { x86_64: 237, aarch64: 235 },
  get_mempolicy: { x86_64: 239, aarch64: 236 },
  set_mempolicy: { x86_64: 238, aarch64: 237 },
  set_mempolicy_home_node: { x86_64: 450, aarch64: 450 },
  migrate_pages: { x86_64: 256, aarch64: 238 },
  move_pages: { x86_64: 279, aarch64: 239 },
  // x86 port I/O, local descriptor tables and obsolete calls.
  iopl: { x86_64: 172 },
  modify_ldt: { x86_64: 154 },
  ioperm: { x86_64: 173 },
  uselib: { x86_64: 134 },
  ustat: { x86_64: 136 },
  sysfs: { x86_64: 139 },
  _sysctl: { x86_64: 156 },
  create_module: { x86_64: 174 },
  get_kernel_syms: { x86_64: 177 },
  query_module: { x86_64: 178 },
  nfsservctl: { x86_64: 180, aarch64: 42 },
};

/** Syscalls checked by their arguments rather than refused outright. */
export const checkedSyscalls = {
  /** clone: refused when it asks for a namespace. */
  clone: { x86_64: 56, aarch64: 220 },
  /** clone3: ENOSYS, so that the C library falls back to clone, whose flags can be checked. */
  clone3: { x86_64: 435, aarch64: 435 },
  /** ioctl: TIOCSTI and TIOCLINUX, which push input into a terminal, are refused. */
  ioctl: { x86_64: 16, aarch64: 29 },
  /** personality: only the values Docker allows (the default, UNAME26, LINUX32, the query). */
  personality: { x86_64: 135, aarch64: 92 },
} as const satisfies Readonly<Record<string, Readonly<Record<SeccompArch, number>>>>;

/**
 * The highest syscall number the filter knows of (file_setattr, Linux 6.17): anything above is
 * a syscall newer than the filter and gets ENOSYS, as Docker's allowlist gives it.
 */
export const highestKnownSyscall: Readonly<Record<SeccompArch, number>> = {
  x86_64: 469,
  aarch64: 469,
};
