export * from './identity.ts';
export * from './configuration.ts';
export * from './knowledge-base.ts';
export * from './calls.ts';
export * from './invitations.ts';
export * from './billing.ts';
