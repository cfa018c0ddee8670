#!/usr/bin/env node
// The package's bin: runs the compiled CLI entry (npm run build makes dist/).
import '../dist/bin.js';
