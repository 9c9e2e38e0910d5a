import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** The paths of a certificate and its private key (PEM). */
export interface CertificateFiles {
  cert: string
  key: string
}

const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']

/** A self-signed certificate authority, `<name>.crt` and `<name>.key` in `dir` (openssl). */
export async function createAuthority(dir: string, name: string): Promise<CertificateFiles> {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) }
  await run('openssl', ['req', '-x509', ...KEY, '-keyout', files.key, '-out', files.cert, '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'])
  return files
}

/**
 * A certificate for `commonName` signed by `authority`, `<name>.crt` and `<name>.key` in `dir`,
 * with `altNames` (`DNS:localhost`, `IP:127.0.0.1`) when given: a server's, or a client's.
 */
export async function issueCertificate(dir: string, name: string, authority: CertificateFiles, commonName: string, altNames: string[] = []): Promise<CertificateFiles> {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) }
  const request = join(dir, `${name}.csr`)
  const extensions = join(dir, `${name}.ext`)
  writeFileSync(extensions, altNames.length > 0 ? `subjectAltName=${altNames.join(',')}\n` : 'basicConstraints=CA:FALSE\n')
  await run('openssl', ['req', ...KEY, '-keyout', files.key, '-out', request, '-subj', `/CN=${commonName}`])
  await run('openssl', ['x509', '-req', '-in', request, '-CA', authority.cert, '-CAkey', authority.key, '-CAcreateserial', '-out', files.cert, '-days', '2', '-extfile', extensions])
  return files
}
