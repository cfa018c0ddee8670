import { afterAll, describe, expect, it } from 'vitest';
import { RemoteConfigError, resolveLogin, saveLogin, serverIdentity } from '../../src/cli/remote/config.js';
import { newConfigHome, removeConfigDirs } from './remote-process.js';

// Which server a saved token may go to, decided from real config files (the CLI end to end is in
// remote.test.ts, against two listening servers).
afterAll(removeConfigDirs);

describe('serverIdentity', () => {
  it('is the origin and the path without trailing slashes, and nothing else of the address', () => {
    expect(serverIdentity('HTTPS://Emend.Example.com:443/')).toBe('https://emend.example.com');
    expect(serverIdentity('https://emend.example.com/api//')).toBe('https://emend.example.com/api');
    expect(serverIdentity('https://user:secret@emend.example.com/?q=1#f')).toBe('https://emend.example.com');
    expect(serverIdentity('http://emend.example.com:8080')).toBe('http://emend.example.com:8080');
    expect(serverIdentity('http://emend.example.com')).not.toBe(serverIdentity('https://emend.example.com'));
    expect(serverIdentity('https://emend.example.com/a')).not.toBe(serverIdentity('https://emend.example.com/b'));
    expect(() => serverIdentity('ftp://emend.example.com')).toThrow(RemoteConfigError);
  });
});

describe('resolveLogin', () => {
  const savedFor = (server: string) => {
    const home = newConfigHome();
    saveLogin({ XDG_CONFIG_HOME: home }, { server, token: 'tk_saved' });
    return home;
  };

  it('gives the saved token to the saved server, however EMEND_SERVER spells it', () => {
    const home = savedFor('https://emend.example.com/api');
    expect(resolveLogin({ XDG_CONFIG_HOME: home })).toEqual({
      server: 'https://emend.example.com/api',
      token: 'tk_saved',
    });
    for (const spelling of ['https://emend.example.com/api/', 'https://EMEND.example.com:443/api'])
      expect(resolveLogin({ XDG_CONFIG_HOME: home, EMEND_SERVER: spelling }).token).toBe('tk_saved');
  });

  it('refuses another server in EMEND_SERVER without EMEND_TOKEN, naming both and not the token', () => {
    const home = savedFor('https://emend.example.com/api');
    for (const other of [
      'https://other.example.com/api',
      'http://emend.example.com/api',
      'https://emend.example.com:8443/api',
      'https://emend.example.com/',
      'https://emend.example.com/api/v2',
    ]) {
      let refusal: unknown;
      try {
        resolveLogin({ XDG_CONFIG_HOME: home, EMEND_SERVER: other });
      } catch (err) {
        refusal = err;
      }
      expect(refusal, other).toBeInstanceOf(RemoteConfigError);
      const message = (refusal as Error).message;
      expect(message).toContain(`EMEND_SERVER is ${serverIdentity(other)} `);
      expect(message).toContain('the saved login is for https://emend.example.com/api,');
      expect(message).toContain('EMEND_TOKEN');
      expect(message).not.toContain('tk_saved');
    }
  });

  it('sends EMEND_TOKEN, given explicitly, to any server', () => {
    const home = savedFor('https://emend.example.com');
    const env = { XDG_CONFIG_HOME: home, EMEND_TOKEN: 'tk_env' };
    expect(resolveLogin({ ...env, EMEND_SERVER: 'https://other.example.com/' })).toEqual({
      server: 'https://other.example.com',
      token: 'tk_env',
    });
    expect(resolveLogin(env)).toEqual({ server: 'https://emend.example.com', token: 'tk_env' });
    const empty = newConfigHome();
    expect(resolveLogin({ XDG_CONFIG_HOME: empty, EMEND_SERVER: 'http://127.0.0.1:1', EMEND_TOKEN: 'tk_env' })).toEqual(
      { server: 'http://127.0.0.1:1', token: 'tk_env' },
    );
    expect(() => resolveLogin({ XDG_CONFIG_HOME: empty, EMEND_SERVER: 'http://127.0.0.1:1' })).toThrow(/not logged in/);
  });
});
