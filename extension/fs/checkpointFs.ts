// The read-only `avfs-checkpoint` file system: avfs-checkpoint://<vault>/<path>?{"checkpoint":"…"}
// is a vault file as it was at a checkpoint. It feeds the native diff editors (`vscode.diff` for one
// file, `vscode.changes` for a checkpoint against the current tree), as VS Code's git extension
// serves `git:` URIs. A checkpoint never changes, so there is nothing to watch.
import * as vscode from 'vscode';
import type { HostClient } from '../client/hostClient';
import { checkpointUri, parseCheckpointUri } from '../uris';
import { fsCall } from './fsError';
import { fileType, millis } from './vaultFs';

export function toCheckpointUri(vault: string, path: string, checkpoint: string): vscode.Uri {
  return vscode.Uri.from(checkpointUri({ vault, path, checkpoint }));
}

export class CheckpointFileSystem implements vscode.FileSystemProvider {
  // Registered with isReadonly: VS Code offers no edits, and writes never reach these methods.
  readonly onDidChangeFile: vscode.Event<vscode.FileChangeEvent[]> = () => new vscode.Disposable(() => {});

  constructor(private readonly host: HostClient) {}

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => {});
  }

  stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    return fsCall(uri, async () => {
      const { vault, path, checkpoint } = parseCheckpointUri(uri);
      const s = await this.host.request('checkpoint/stat', { vault, name: checkpoint, path });
      return { type: fileType(s.type), size: s.size, mtime: millis(s.mtime_ns), ctime: Date.parse(s.ctime), permissions: vscode.FilePermission.Readonly };
    });
  }

  readDirectory(uri: vscode.Uri): Promise<[string, vscode.FileType][]> {
    return fsCall(uri, async () => {
      const { vault, path, checkpoint } = parseCheckpointUri(uri);
      const { entries } = await this.host.request('checkpoint/readDirectory', { vault, name: checkpoint, path });
      return entries.map((e): [string, vscode.FileType] => [e.name, fileType(e.type)]);
    });
  }

  readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return fsCall(uri, async () => {
      const { vault, path, checkpoint } = parseCheckpointUri(uri);
      const { data } = await this.host.request('checkpoint/readFile', { vault, name: checkpoint, path });
      return Buffer.from(data, 'base64');
    });
  }

  writeFile(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  createDirectory(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}
