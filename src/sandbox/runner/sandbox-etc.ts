/** The user every sandbox process runs as, inside its user namespace. */
export const sandboxUser = { name: "sandbox", uid: 1000, gid: 1000, home: "/workspace" } as const;

/**
 * The files of /etc a sandbox on the `base` template sees: who its user is, its hostname and
 * loopback, and nothing of the host's configuration. bubblewrap makes them from these bytes
 * (--ro-bind-data), so no host path shows in the sandbox's mount table.
 */
export const sandboxEtcFiles: Readonly<Record<string, string>> = {
  passwd: `root:x:0:0:root:/root:/bin/sh\n${sandboxUser.name}:x:${sandboxUser.uid}:${sandboxUser.gid}:sandbox:${sandboxUser.home}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
  group: `root:x:0:\n${sandboxUser.name}:x:${sandboxUser.gid}:\nnogroup:x:65534:\n`,
  hostname: "sandbox\n",
  hosts: "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n",
  "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
};
