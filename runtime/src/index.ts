export { validateProvider, type ProviderCredentialsInput } from './providers/validate.ts';
