/**
 * The sandbox contract shared by the exec pipeline and the policy: the isolation a run gets.
 * `workspace`: the vault's mount (and a private /tmp) is the only writable place, the home is a
 * private empty one, no network unless approved. `none`: no OS isolation (the honest opt-out,
 * recorded in the envelope). The policy judges code it cannot read by this mode.
 */
import { z } from 'zod';

export const SandboxMode = z.enum(['workspace', 'none']);
export type SandboxMode = z.infer<typeof SandboxMode>;
