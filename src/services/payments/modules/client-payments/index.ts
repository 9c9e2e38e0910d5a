// The client payment API (POST /payments), with the vault and the 3-D Secure frames in its scope.
export { clientApiPlugin } from './client-api.plugin.ts'
