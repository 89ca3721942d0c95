/** The little of s3rver (an S3-protocol server for tests, test/helpers/s3-server.ts) the tests use; it ships no types. */
declare module 's3rver' {
  interface S3rverOptions {
    address?: string
    port?: number
    silent?: boolean
    directory?: string
    resetOnClose?: boolean
    configureBuckets?: Array<{ name: string }>
  }
  export default class S3rver {
    constructor (options: S3rverOptions)
    run (): Promise<{ address: string, port: number }>
    close (): Promise<void>
  }
}
