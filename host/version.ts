/** The package version, inlined by the bundler. */
import pkg from '../package.json';

export const VERSION: string = pkg.version;
