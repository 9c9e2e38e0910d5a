export { clientAddress, fromTrustedProxy, type Address } from './client-address.ts'
export { createSpecialGroupsService, type SpecialGroupsService } from './special-groups.service.ts'
