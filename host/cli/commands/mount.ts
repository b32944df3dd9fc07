/** Mount commands: mount, unmount, mounts. See docs/fuse.md (handlers: ../handlers/mount.ts). */
import { type Command, Option } from 'commander';
import { type Act, example } from '../define';

export function register(program: Command, act: Act): void {
  example(
    program
      .command('mount <vault> <mountpoint>')
      .description('mount a vault as a directory (FUSE); returns once the mount is ready')
      .option('-r, --readonly', 'mount read-only (writes fail with EROFS)')
      .option('-f, --foreground', 'serve the mount in this process until SIGTERM/SIGINT')
      .option('--cache-ms <ms>', 'how long the kernel may cache names and attributes (default 1000)')
      .option('--allow-other', 'let other users use the mount, with the kernel checking modes and owners (needs user_allow_other in /etc/fuse.conf unless root)')
      .addOption(new Option('--ready-fd <fd>').hideHelp())
      .action(act('mount.mount')),
    'avfs mount demo /mnt/demo',
    'avfs mount demo /mnt/demo --readonly --json',
    'avfs mount demo /mnt/demo --allow-other',
  );
  example(
    program
      .command('unmount <mountpoint>')
      .alias('umount')
      .description('unmount a vault mount (exit 0 with unmounted:false if nothing was mounted there)')
      .option('--timeout <ms>', 'how long to wait for the server to stop before killing it', '10000')
      .action(act('mount.unmount')),
    'avfs unmount /mnt/demo',
  );
  example(
    program.command('mounts').description('list live vault mounts (stale ones left by a dead server are cleaned first)').action(act('mount.list')),
    'avfs mounts --json',
  );
}
