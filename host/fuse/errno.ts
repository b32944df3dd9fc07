/** Turns anything thrown into the negative errno FUSE wants, through the one error table. */
import { constants } from 'node:os';
import { type AvfsError, toAvfsError } from '../protocol/errors';

const ERRNO = constants.errno as Record<string, number | undefined>;
const EIO = ERRNO.EIO ?? 5;

export function errnoByName(name: string): number {
  return -(ERRNO[name] ?? EIO);
}

export function fuseErrno(e: unknown): { errno: number; error: AvfsError } {
  const error = toAvfsError(e);
  return { errno: errnoByName(error.errno), error };
}
