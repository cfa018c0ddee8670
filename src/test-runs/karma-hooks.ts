import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The line above the names block. */
export const KARMA_NAMES_HEADER = 'emend: karma tests by name';

/** The preload's file in the run's tools directory. */
export const KARMA_PRELOAD = 'emend-karma.cjs';

/**
 * Karma runs a project's tests in the browsers its configuration names, and its reporters name
 * failing tests only. A project's own CI chooses the browser (an environment variable its
 * configuration reads, a sed in a workflow, a launcher that downloads Chrome); the sandbox has one
 * browser, the system's Chromium at CHROME_BIN, and the registries only, so PhantomJS's or
 * Puppeteer's download never happened. This preload (NODE_OPTIONS, like mocha-names.ts) waits for
 * Karma's configuration module and, after the project's configuration file has run, changes what
 * the run needs and nothing the tests see:
 *
 * - the browsers: one, emend's Chromium through the project's own karma-chrome-launcher (headless),
 *   and CHROME_BIN back to it (configurations set it to Puppeteer's path while they load);
 * - the plugins: one that fails to load (a launcher whose binary was never downloaded) is left
 *   out and named, instead of Karma 4's "Found 1 load error" ending the run before any test;
 * - one run (singleRun, no watching), as CI runs it;
 * - a reporter of its own that appends, when the run ends, a block headed KARMA_NAMES_HEADER with a
 *   line per test, its mark and its name as Karma's reporters print it (suites and title joined
 *   by spaces, spaces collapsed), to the run's names file (EMEND_TEST_NAMES, names-file.ts).
 *
 * Without a browser in the sandbox (no CHROME_BIN) or a Chrome launcher in the project, the
 * browsers stay as configured and the verdict says a browser is missing. Read by
 * parseKarmaNames (parse-karma.ts).
 */
const PRELOAD_SOURCE = `// emend's Karma hooks (preloaded with NODE_OPTIONS; see emend's docs/validator.md).
'use strict';
(function () {
  var Module = require('module');
  var path = require('path');
  var fs = require('fs');
  var load = Module._load;
  // The sandbox's browser, read before a configuration file sets CHROME_BIN to a path of its own.
  var chromium = process.env.CHROME_BIN;
  var hooked = false;
  function say(text) { process.stderr.write('emend: ' + text + '\\n'); }
  function clean(text) { return String(text).replace(/\\s+/g, ' ').trim(); }

  function NamesReporter() {
    var lines = [];
    var written = false;
    function write() {
      if (written || !process.env.EMEND_TEST_NAMES) return;
      written = true;
      try { fs.appendFileSync(process.env.EMEND_TEST_NAMES, '${KARMA_NAMES_HEADER}\\n' + lines.join('\\n') + '\\n\\n'); } catch (e) { /* not writable: no names */ }
    }
    this.onSpecComplete = function (browser, result) {
      var name = clean((result.suite || []).concat([result.description]).join(' '));
      var mark = result.skipped || result.pending ? '\\u25cb' : result.success ? '\\u2713' : '\\u2717';
      lines.push(mark + ' ' + name);
    };
    this.onRunComplete = write;
    process.on('exit', write);
  }
  NamesReporter.$inject = [];

  // The plugins as Karma would load them, 'karma-*' read from the directory Karma reads it from,
  // each required once here: one that throws is left out.
  function loadable(plugins, pluginDir) {
    var kept = [];
    (plugins || ['karma-*']).forEach(function (plugin) {
      if (typeof plugin !== 'string') { kept.push(plugin); return; }
      var names = [plugin];
      if (plugin.indexOf('*') >= 0) {
        var pattern = new RegExp('^' + plugin.replace(/\\*/g, '.*') + '$');
        names = [];
        try {
          fs.readdirSync(pluginDir).forEach(function (entry) {
            if (entry[0] === '@') {
              try { fs.readdirSync(path.join(pluginDir, entry)).forEach(function (e) { names.push(entry + '/' + e); }); } catch (e) {}
            } else names.push(entry);
          });
        } catch (e) { kept.push(plugin); return; }
        names = names.filter(function (n) { return pattern.test(n) && n !== 'karma-cli' && n !== 'karma-runner.github.com'; });
      }
      names.forEach(function (name) {
        var at = name.indexOf('*') < 0 && !path.isAbsolute(name) && name[0] !== '.' ? path.join(pluginDir, name) : name;
        try { require(at); kept.push(at); }
        catch (e) { say('karma plugin ' + name + ' left out: it does not load here (' + clean(e.message).slice(0, 200) + ')'); }
      });
    });
    return kept;
  }

  function chromeLauncher(pluginDir) {
    try {
      var at = path.join(pluginDir, 'karma-chrome-launcher');
      var launchers = require(at);
      return { path: at, base: launchers['launcher:ChromeHeadless'] ? 'ChromeHeadless' : 'Chrome' };
    } catch (e) { return undefined; }
  }

  function adjust(config, pluginDir) {
    if (!config || config.__emend) return config;
    config.__emend = true;
    var plugins = loadable(config.plugins, pluginDir);
    var chrome = chromium ? chromeLauncher(pluginDir) : undefined;
    if (chrome) {
      process.env.CHROME_BIN = chromium;
      if (plugins.indexOf(chrome.path) < 0) plugins.push(chrome.path);
      // Karma turns customLaunchers into plugins while it parses the configuration, which has
      // happened: the launcher is defined as that step would have defined it.
      var definition = { base: chrome.base, flags: ['--disable-dev-shm-usage'] };
      var token = 'launcher:' + chrome.base;
      var create = function (injector) { return injector.createChild([{ args: ['value', definition] }], [token]).get(token); };
      create.$inject = ['injector'];
      plugins.push({ 'launcher:EmendChromium': ['factory', create] });
      say('karma runs in the sandbox\\'s Chromium (the configuration named ' + JSON.stringify(config.browsers || []) + ')');
      config.browsers = ['EmendChromium'];
    }
    var reporter = {};
    reporter['reporter:emend-names'] = ['type', NamesReporter];
    plugins.push(reporter);
    config.plugins = plugins;
    config.reporters = (config.reporters || ['progress']).concat(['emend-names']);
    config.singleRun = true;
    config.autoWatch = false;
    return config;
  }

  Module._load = function (request, parent) {
    var exported = load.apply(this, arguments);
    if (!hooked && exported && typeof exported.parseConfig === 'function' && exported.Pattern && /config$/.test(request)) {
      var file;
      try { file = Module._resolveFilename(request, parent); } catch (e) { return exported; }
      if (!/[\\\\/]karma[\\\\/]lib[\\\\/]config\\.js$/.test(file)) return exported;
      hooked = true;
      // Karma looks for 'karma-*' plugins beside itself: node_modules/karma/lib/../..
      var pluginDir = path.resolve(path.dirname(file), '..', '..');
      var parse = exported.parseConfig;
      exported.parseConfig = function () {
        var parsed = parse.apply(this, arguments);
        if (parsed && typeof parsed.then === 'function') return parsed.then(function (c) { return adjust(c, pluginDir); });
        return adjust(parsed, pluginDir);
      };
    }
    return exported;
  };
})();
`;

/** Writes the preload into the run's tools directory (prepared, and read-only to the tests). */
export async function writeKarmaHooks(toolsDir: string): Promise<void> {
  await writeFile(join(toolsDir, KARMA_PRELOAD), PRELOAD_SOURCE, { flag: 'wx', mode: 0o444 });
}
