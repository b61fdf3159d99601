// `auth login` credentials: flags > env > prompts (only at a terminal, key masked); otherwise exit 4 naming flags and variables.
import { describe, expect, it, vi } from 'vitest';
import { collectLoginCredentials, type Prompter } from '../../../src/cli/commands/auth-remote.js';
import { canPrompt } from '../../../src/cli/io.js';

const prompter = (answers: { input?: string; password?: string }): Prompter & { calls: string[] } => {
  const calls: string[] = [];
  return {
    calls,
    input: vi.fn(async (m: string) => {
      calls.push(`input:${m}`);
      return answers.input ?? '';
    }),
    password: vi.fn(async (m: string) => {
      calls.push(`password:${m}`);
      return answers.password ?? '';
    }),
  };
};

describe('collectLoginCredentials', () => {
  it('flags beat env vars; nothing is prompted when both are known', async () => {
    const p = prompter({});
    expect(await collectLoginCredentials({ clientId: 'flag-id', apiKey: 'flag-key' }, { WMARK_CLIENT_ID: 'env-id', WMARK_API_KEY: 'env-key' }, p)).toEqual({
      clientId: 'flag-id',
      apiKey: 'flag-key',
    });
    expect(await collectLoginCredentials({}, { WMARK_CLIENT_ID: 'env-id', WMARK_API_KEY: 'env-key' }, p)).toEqual({ clientId: 'env-id', apiKey: 'env-key' });
    expect(p.calls).toEqual([]);
  });

  it('prompts only for what is missing, the key through the masked password prompt', async () => {
    const p = prompter({ password: ' typed-key ' });
    expect(await collectLoginCredentials({ clientId: 'id' }, {}, p)).toEqual({ clientId: 'id', apiKey: 'typed-key' });
    expect(p.calls).toEqual(['password:API key']);
    const both = prompter({ input: 'typed-id', password: 'typed-key' });
    expect(await collectLoginCredentials({}, {}, both)).toEqual({ clientId: 'typed-id', apiKey: 'typed-key' });
    expect(both.calls).toEqual(['input:Client id', 'password:API key']);
  });

  it('without a prompter, missing credentials are exit 4 naming the flags and variables', async () => {
    const err = await collectLoginCredentials({}, {}, undefined).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 4, code: 'CREDENTIALS_REQUIRED' });
    const text = `${(err as Error).message} ${(err as { hint: string }).hint}`;
    for (const word of ['--client-id', 'WMARK_CLIENT_ID', '--api-key', 'WMARK_API_KEY', 'CI']) expect(text).toContain(word);
    await expect(collectLoginCredentials({ clientId: 'id' }, {}, undefined)).rejects.toThrow(/missing the API key \(--api-key or WMARK_API_KEY\)/);
  });

  it('an empty answer is still missing', async () => {
    await expect(collectLoginCredentials({}, {}, prompter({ input: 'id', password: '   ' }))).rejects.toMatchObject({ exitCode: 4 });
  });
});

describe('canPrompt', () => {
  const tty = { isTTY: true } as never;
  it('needs a TTY on stdin and stdout and no CI', () => {
    expect(canPrompt({ stdin: tty, stdout: { write: () => true, isTTY: true }, env: {} })).toBe(true);
    expect(canPrompt({ stdin: tty, stdout: { write: () => true, isTTY: true }, env: { CI: '1' } })).toBe(false);
    expect(canPrompt({ stdin: {} as never, stdout: { write: () => true, isTTY: true }, env: {} })).toBe(false);
    expect(canPrompt({ stdin: tty, stdout: { write: () => true, isTTY: false }, env: {} })).toBe(false);
  });
});
