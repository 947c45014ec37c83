// eslint over the console (public/): ES modules in the browser, no build step.
// The recommended rules, plus a few that catch what a reviewer of this code looks for.
import js from '@eslint/js';
import globals from 'globals';

export default [
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: globals.browser,
    },
    rules: {
      // A loose comparison hides type confusion in data from the API; `x != null` (null or
      // undefined, as absent JSON fields are) is the one idiom kept.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // The console must not build markup from strings (XSS): dom.js builds nodes.
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      // Variables are block scoped and never reassigned by accident.
      'no-var': 'error',
      'prefer-const': 'error',
      // Shadowed names make a view's data flow hard to follow.
      'no-shadow': 'error',
      'no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_' }],
    },
  },
];
