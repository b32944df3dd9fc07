// The `avfs` file system: avfs://<vault>/<path> read and written through the vault host, so vault
// files open, edit and save in ordinary editors and a vault can be a workspace folder. Changes made
// by anyone (the CLI, a mount, an agent's exec) arrive as host events and are passed on, so open
// editors and the Explorer stay current without polling.
import * as vscode from 'vscode';
import type { HostClient } from '../client/hostClient';
import type { FileType } from '../../host/protocol/vault';
import { type ChangeImpact } from '../events';
import { joinPath, parseVaultUri, VAULT_SCHEME, vaultUri } from '../uris';
import { fsCall } from './fsError';

export function fileType(type: FileType): vscode.FileType {
  switch (type) {
    case 'file':
      return vscode.FileType.File;
    case 'directory':
      return vscode.FileType.Directory;
    case 'symlink':
      return vscode.FileType.SymbolicLink;
    default:
      return vscode.FileType.Unknown;
  }
}

/** Nanoseconds since the epoch (a decimal string) to the milliseconds VS Code compares. */
export function millis(ns: string): number {
  return Number(BigInt(ns) / 1_000_000n);
}

export function toUri(vault: string, path: string): vscode.Uri {
  return vscode.Uri.from(vaultUri({ vault, path }));
}

export class VaultFileSystem implements vscode.FileSystemProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;

  constructor(private readonly host: HostClient) {}

  // Every vault's changes arrive from the host whether or not VS Code watches: nothing to subscribe.
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => {});
  }

  stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    return fsCall(uri, async () => {
      const { vault, path } = parseVaultUri(uri);
      const s = await this.host.request('fs/stat', { vault, path });
      let type = fileType(s.type);
      let size = s.size;
      if (s.type === 'symlink') {
        // VS Code wants a link's target type too (a link to a folder browses as a folder).
        const target = await this.host.request('fs/stat', { vault, path, follow: true }).catch(() => undefined);
        if (target) {
          type |= fileType(target.type);
          size = target.size;
        }
      }
      const readonly = (parseInt(s.mode, 8) & 0o200) === 0;
      return {
        type,
        size,
        mtime: millis(s.mtime_ns),
        ctime: Date.parse(s.ctime),
        ...(readonly ? { permissions: vscode.FilePermission.Readonly } : {}),
      };
    });
  }

  readDirectory(uri: vscode.Uri): Promise<[string, vscode.FileType][]> {
    return fsCall(uri, async () => {
      const { vault, path } = parseVaultUri(uri);
      const { entries } = await this.host.request('fs/readDirectory', { vault, path });
      return Promise.all(
        entries.map(async (e): Promise<[string, vscode.FileType]> => {
          if (e.type !== 'symlink') return [e.name, fileType(e.type)];
          const target = await this.host.request('fs/stat', { vault, path: joinPath(path, e.name), follow: true }).catch(() => undefined);
          return [e.name, vscode.FileType.SymbolicLink | (target ? fileType(target.type) : 0)];
        }),
      );
    });
  }

  readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return fsCall(uri, async () => {
      const { data } = await this.host.request('fs/readFile', parseVaultUri(uri));
      return Buffer.from(data, 'base64');
    });
  }

  writeFile(uri: vscode.Uri, content: Uint8Array, options: { readonly create: boolean; readonly overwrite: boolean }): Promise<void> {
    return fsCall(uri, async () => {
      const data = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('base64');
      await this.host.request('fs/writeFile', { ...parseVaultUri(uri), data, create: options.create, overwrite: options.overwrite });
    });
  }

  createDirectory(uri: vscode.Uri): Promise<void> {
    return fsCall(uri, async () => {
      await this.host.request('fs/createDirectory', parseVaultUri(uri));
    });
  }

  delete(uri: vscode.Uri, options: { readonly recursive: boolean }): Promise<void> {
    return fsCall(uri, async () => {
      await this.host.request('fs/delete', { ...parseVaultUri(uri), recursive: options.recursive });
    });
  }

  rename(from: vscode.Uri, to: vscode.Uri, options: { readonly overwrite: boolean }): Promise<void> {
    return fsCall(from, async () => {
      const src = parseVaultUri(from);
      const dst = parseVaultUri(to);
      if (src.vault !== dst.vault) {
        // VS Code moves across file systems by copy and delete; across vaults, do the same.
        await this.copyAcross(from, to, options.overwrite);
        await this.delete(from, { recursive: true });
        return;
      }
      await this.host.request('fs/rename', { vault: src.vault, from: src.path, to: dst.path, overwrite: options.overwrite });
    });
  }

  copy(from: vscode.Uri, to: vscode.Uri, options: { readonly overwrite: boolean }): Promise<void> {
    return fsCall(from, async () => {
      const src = parseVaultUri(from);
      const dst = parseVaultUri(to);
      if (src.vault !== dst.vault) return this.copyAcross(from, to, options.overwrite);
      // Inside one vault the host shares the chunks: no bytes travel.
      await this.host.request('fs/copy', { vault: src.vault, from: src.path, to: dst.path, recursive: true, overwrite: options.overwrite });
    });
  }

  /** Passes on what a host event says changed in a vault. */
  fire(impact: ChangeImpact): void {
    const events: vscode.FileChangeEvent[] = impact.files.map((f) => ({
      type: f.kind === 'created' ? vscode.FileChangeType.Created : f.kind === 'deleted' ? vscode.FileChangeType.Deleted : vscode.FileChangeType.Changed,
      uri: toUri(impact.vault, f.path),
    }));
    if (impact.wholeTree) {
      // Changed events are matched path by path: name the root and every open file of the vault.
      events.push({ type: vscode.FileChangeType.Changed, uri: toUri(impact.vault, '/') });
      for (const doc of vscode.workspace.textDocuments) {
        if (doc.uri.scheme === VAULT_SCHEME && doc.uri.authority === impact.vault) events.push({ type: vscode.FileChangeType.Changed, uri: doc.uri });
      }
    }
    if (events.length > 0) this.emitter.fire(events);
  }

  dispose(): void {
    this.emitter.dispose();
  }

  private async copyAcross(from: vscode.Uri, to: vscode.Uri, overwrite: boolean): Promise<void> {
    const stat = await this.stat(from);
    if (stat.type & vscode.FileType.Directory) {
      await this.createDirectory(to).catch((e: unknown) => {
        if (!(overwrite && e instanceof vscode.FileSystemError && e.code === 'FileExists')) throw e;
      });
      for (const [name] of await this.readDirectory(from)) {
        await this.copyAcross(vscode.Uri.joinPath(from, name), vscode.Uri.joinPath(to, name), overwrite);
      }
      return;
    }
    await this.writeFile(to, await this.readFile(from), { create: true, overwrite });
  }
}
