import { type Static, Type } from '@sinclair/typebox'

const state = (values: readonly string[], description: string) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    { description },
  )

/** `GET /health`: the shape of the meta-human reference backend's, which its front end probes. */
export const HealthSchema = Type.Object(
  {
    status: Type.Literal('ok', { description: 'always ok: the process answers (load balancers should use /readyz)' }),
    uptime_seconds: Type.Number({ description: 'seconds since the avatar service started, to the hundredth' }),
    version: Type.String({ description: "Triad's version" }),
    services: Type.Object({
      chat: state(['available'], 'chat always answers (from the mock when there is no model)'),
      llm: state(['available', 'mock_mode'], 'available with AVATAR_LLM_API_KEY, else mock_mode: replies come from the local mock'),
      tts: state(['available', 'unavailable'], 'whether POST /v1/tts can speak now (GET /v1/tts/voices says with which provider)'),
      asr: state(['available', 'unavailable'], 'whether POST /v1/asr has a recognizer (GET /v1/asr/status says which, or what to configure)'),
    }),
  },
  { description: 'The avatar service and its providers' },
)

export type Health = Static<typeof HealthSchema>
