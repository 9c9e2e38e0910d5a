export { installCors } from './cors.ts'
