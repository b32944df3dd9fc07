import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.vscode-test/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // The editor talks only to the host, over the protocol: of host/, it imports host/protocol alone
    // (never the store, the vfs, the daemon…, which would run in the extension host's process).
    files: ['extension/**/*.ts', 'webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)host/(?!protocol/)',
              message: 'extension/ and webview/ import only host/protocol from host/: the host is reached over its protocol.',
            },
          ],
        },
      ],
    },
  },
);
