export * from './identity.ts';
export * from './configuration.ts';
