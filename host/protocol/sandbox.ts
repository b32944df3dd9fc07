/**
 * The sandbox contract shared by the exec pipeline and the policy: the isolation a run gets.
 * `workspace`: the vault's mount (and a private /tmp) is the only writable place, the home is a
 * private empty one, no network unless approved. `none`: no OS isolation (the honest opt-out,
 * recorded in the envelope). The policy judges code it cannot read by this mode.
 * docs/exec.md says exactly what each mode guarantees.
 */
import { z } from 'zod';

export const SandboxMode = z.enum(['workspace', 'none']);
export type SandboxMode = z.infer<typeof SandboxMode>;

/** Something the run tried that the sandbox stopped, as the kernel reported it. */
export const SandboxViolation = z.object({
  kind: z.enum(['process_limit', 'memory_limit', 'network_refused']),
  message: z.string(),
});
export type SandboxViolation = z.infer<typeof SandboxViolation>;

/** The limits a sandboxed run had, and what enforced them (null: not enforced here). */
export const SandboxLimits = z.object({
  processes: z.number().int().nullable().describe('most processes and threads the run may have at once'),
  processes_by: z
    .enum(['cgroup', 'rlimit', 'pid_namespace'])
    .nullable()
    .describe('cgroup: a pids cgroup of the run; rlimit: RLIMIT_NPROC inside the run\'s user namespace; pid_namespace: as root without a cgroup, the pid_max of a pid namespace around the run (Linux 6.14 and later: at least `processes`, at most `processes` + 299 at once)'),
  memory_bytes: z.number().int().nullable().describe('most memory: the whole run (cgroup) or each process (rlimit, RLIMIT_DATA)'),
  memory_by: z.enum(['cgroup', 'rlimit']).nullable(),
});
export type SandboxLimits = z.infer<typeof SandboxLimits>;

/** What the envelope records of the run's isolation. */
export const SandboxRecord = z.object({
  mode: SandboxMode,
  tool: z.string().nullable().describe('what isolated the run ("bubblewrap 0.8.0"); null with --sandbox none'),
  writable: z.array(z.string()).describe('host paths the run could write; "(private)" ones are new and dropped after the run'),
  network: z
    .enum(['none', 'shared', 'filtered'])
    .describe('none: a network namespace of its own (loopback only); shared: the host\'s network; filtered: a namespace of its own whose only way out is a proxy that reaches `network_hosts` alone'),
  network_hosts: z.array(z.string()).default([]).describe('with network filtered: the hosts the run could reach (read by the policy from the command)'),
  network_why: z.string().describe('why the run had the network it had'),
  note: z.string().nullable().describe('with mode none: why (asked for, or bubblewrap cannot run here and the default fell back)'),
  home: z.string().nullable().describe('the private, empty home the run saw as $HOME'),
  home_read_only: z.array(z.string()).describe('paths of the real home shown read-only inside (the user\'s allow-list)'),
  path_read_only: z.array(z.string()).default([]).describe('folders of the tools the command\'s PATH (and variables such as PYENV_ROOT, NVM_DIR, VIRTUAL_ENV) names that the sandbox would hide (under the home or /tmp): each tool\'s own folder (~/.pyenv for its shims, a prefix for its bin, ~/.rustup beside ~/.cargo), shown read-only so its programs and what they call still run; secrets inside stay hidden'),
  limits: SandboxLimits,
  violations: z.array(SandboxViolation),
});
export type SandboxRecord = z.infer<typeof SandboxRecord>;
