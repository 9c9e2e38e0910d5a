import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CompiledQuery, type KyselyPlugin, type RootOperationNode, sql } from 'kysely'
import { createSessionsRepository } from '../../../src/services/avatar/modules/sessions/sessions.repository.ts'
import { testDialect } from '../../helpers/build-app.ts'
import { buildAvatarApp, chat } from './helpers.ts'

interface Listed {
  id: string
  created_at: string
  message_count: number
}

/** Follows `before` from page to page until a short page, as a client does. */
async function walk(app: Awaited<ReturnType<typeof buildAvatarApp>>['app'], limit: number): Promise<Listed[]> {
  const seen: Listed[] = []
  for (let pages = 0; pages < 100; pages++) {
    const before = seen.at(-1)?.id
    const response = await app.inject({ method: 'GET', url: `/v1/sessions?limit=${limit}${before ? `&before=${before}` : ''}` })
    assert.equal(response.statusCode, 200)
    const page = response.json().sessions as Listed[]
    seen.push(...page)
    if (page.length < limit) return seen
  }
  throw new Error('the pages never ended')
}

/** Records the operation nodes of the queries run through it, to compile and EXPLAIN them. */
function recorder(): KyselyPlugin & { nodes: RootOperationNode[] } {
  const nodes: RootOperationNode[] = []
  return {
    nodes,
    transformQuery: (args) => {
      nodes.push(args.node)
      return args.node
    },
    transformResult: async (args) => args.result,
  }
}

describe('session list paging', () => {
  it('walks every active session once, newest first (ties broken by id), page after page', async (t) => {
    const { app, clock } = await buildAvatarApp(t, { env: { AVATAR_SESSION_TTL: '1h' } })
    // A session that has expired by the time the others are listed is in no page.
    await chat(app, { sessionId: 'expired', userText: 'hi' })
    clock.advance(3_600_001)
    // 23 sessions; every third one shares its creation time with the one before (the id breaks the tie).
    for (let index = 0; index < 23; index++) {
      await chat(app, { sessionId: `s${String(index).padStart(2, '0')}`, userText: 'hi' })
      if (index % 3 !== 1) clock.advance(1000)
    }
    const everyone = (await app.inject({ method: 'GET', url: '/v1/sessions' })).json().sessions as Listed[]
    assert.equal(everyone.length, 23)
    assert.ok(!everyone.some((session) => session.id === 'expired'))
    for (const limit of [1, 4, 5, 23, 1000]) {
      const walked = await walk(app, limit)
      assert.deepEqual(walked, everyone, `pages of ${limit}`)
    }
    const keys = everyone.map((session) => `${session.created_at} ${session.id}`)
    assert.deepEqual(keys, [...keys].sort().reverse(), 'newest first, then by id')
    assert.ok(new Set(keys.map((key) => key.split(' ')[0])).size < keys.length, 'the data has ties to break')
  })

  it('answers a page from the listing index, seeking straight to the cursor', async (t) => {
    const { app, database, clock } = await buildAvatarApp(t)
    await chat(app, { sessionId: 'anchor', userText: 'hi' })
    const plugin = recorder()
    const db = database.db.withPlugin(plugin)
    const repository = createSessionsRepository({ ...database, db, routedRead: (work) => work(db) })
    const cutoff = new Date(clock.now().getTime() - 3_600_000).toISOString()
    await repository.listActiveSessions({ cutoff, limit: 50, beforeId: 'anchor' })
    const node = plugin.nodes.at(-1)
    assert.ok(node)
    const compiled = database.db.getExecutor().compileQuery(node, { queryId: 'plan' })

    if (testDialect === 'sqlite') {
      const plan = await database.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]))
      const details = plan.rows.map((row) => row.detail).join('\n')
      // SEARCH (a seek on the row value), not SCAN (a walk from the top of the index), and no
      // table lookups or sort step.
      assert.match(details, /SEARCH avatar_sessions USING COVERING INDEX avatar_sessions_listing \(\(created_at,id\)<\(\?,\?\)\)/)
      assert.doesNotMatch(details, /TEMP B-TREE/)
      return
    }
    // A test table is tiny, so PostgreSQL would read it whole; with that and sorting ruled out
    // (for this transaction only), the plan shows whether the index can serve the page.
    const plan = await database.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx)
      await sql`set local enable_sort = off`.execute(trx)
      return trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]))
    })
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n')
    assert.match(text, /Index Only Scan Backward using avatar_sessions_listing/)
    assert.match(text, /Index Cond: \(+ROW\(created_at, id\) < ROW\(/)
    assert.doesNotMatch(text, /Sort|Seq Scan|disabled/i)
  })
})
