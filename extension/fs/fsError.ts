// The FileSystemError a provider throws for a failed host call: the kind picks the factory (the
// error table's `vscode` column), the message is the sentence a person reads (VS Code shows it as
// "Failed to save 'x': <message>").
import * as vscode from 'vscode';
import { errorMessage, fsErrorName } from '../errors';
import { BadUriError } from '../uris';

export function toFileSystemError(e: unknown, uri: vscode.Uri): Error {
  if (e instanceof vscode.FileSystemError) return e;
  if (e instanceof BadUriError) return vscode.FileSystemError.FileNotFound(uri);
  const name = fsErrorName(e);
  // No FileSystemError fits (an invalid request, a bug): VS Code shows a plain error's message as it is.
  return name ? vscode.FileSystemError[name](errorMessage(e)) : new Error(errorMessage(e));
}

/** Runs a provider operation, turning any failure into the matching FileSystemError. */
export async function fsCall<T>(uri: vscode.Uri, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    throw toFileSystemError(e, uri);
  }
}
