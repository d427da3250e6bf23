import pino from 'pino';

export type Logger = pino.Logger;

/**
 * The process's one logger: Fastify logs requests through it, and services and job workers get it
 * from the composition root, so every line of a process goes to the same place at the same level.
 */
export function createLogger(level: string): Logger {
  return pino({ level });
}
