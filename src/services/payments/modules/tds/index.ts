// 3-D Secure: the frames a payment's challenge loop opens, and the signed proofs (hints) it carries.
export { tdsFrameRoutes } from './tds.routes.ts'
export { type HintKind, signFrameData, signHint, verifyHints } from './tds.signing.ts'
