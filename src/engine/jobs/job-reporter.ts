// How work under a job tells its progress: done of total in the job's own unit, and the stage it is in.
export type JobReporter = (done: number, total: number, stage?: string) => void;
