// Ingest with ffmpeg in this process: the source is normalised into working segments in a staging folder, a forensic
// title's variants and sidecar are prepared beside them, and the folder is published into the media folder by rename,
// so a video's folder appears complete or not at all.
import { mkdir, rm } from 'node:fs/promises';
import { WmarkError } from '../../core/errors.js';
import { forensicStage } from '../../core/forensic/variant-plan.js';
import { framesPerSegment } from '../../core/plan/segment-timing.js';
import { segmentDurations, workingFormPlan } from '../../core/plan/working-form.js';
import { transcodeToSegments } from '../../ffmpeg/transcode-segments.js';
import type { FolderMediaStore } from '../../media/folder-store.js';
import { prepareBandMedia, SEVERAL_BANDS } from '../band/band-media.js';
import { sayOnce } from '../band/band-support.js';
import { mediaKeys, scratch } from '../data-folder/layout.js';
import type { EngineParts } from '../deployment.js';
import type { IngestPath } from '../ingest-path.js';
import type { JobReporter } from '../jobs/job-reporter.js';
import type { VideoRecord } from '../state/state-store.js';
import { prepareForensic } from './forensic-prepare.js';
import { publishDir } from './publish-dir.js';

export class LocalIngest implements IngestPath {
  constructor(
    private readonly parts: EngineParts,
    private readonly media: FolderMediaStore,
  ) {}

  async normalise(video: VideoRecord, input: string, report: JobReporter, signal?: AbortSignal): Promise<Partial<VideoRecord>> {
    const { runner, paths } = this.parts;
    const staging = scratch.ingestStaging(paths, video.id);
    const fps = { num: video.fpsNum!, den: video.fpsDen! };
    const totalMs = Math.round((video.durationSeconds ?? 0) * 1000);
    try {
      await rm(staging, { recursive: true, force: true });
      await mkdir(staging, { recursive: true });
      report(0, totalMs, 'normalising');
      const plan = workingFormPlan(video);
      const { frames, segments, timeOrigin } = await transcodeToSegments(
        runner,
        { ...plan, source: input, outDir: staging, label: video.sourceUrl },
        { durationSeconds: video.durationSeconds ?? undefined, onProgress: (f) => report(Math.round(f * totalMs), totalMs, 'normalising'), signal },
      );
      const durations = segmentDurations(segments, frames, fps, plan.lead);
      if (video.enableForensic) {
        const stage = forensicStage(video.forensicLayout);
        report(0, durations.length, stage);
        await prepareForensic(
          runner,
          {
            videoId: video.id,
            dir: staging,
            width: video.width!,
            height: video.height!,
            fps: fps.num / fps.den,
            gop: framesPerSegment(fps),
            hasAudio: video.hasAudio,
            segmentDurations: durations,
            encode: this.parts.encode,
            workers: this.parts.workers,
            secret: this.parts.secret,
            ...(video.forensicLayout ? { layout: video.forensicLayout } : {}),
          },
          (done, total) => report(done, total, stage),
        );
      }
      const { x264, off, chosen } = this.parts.band;
      if (x264) {
        report(0, durations.length, 'band encode');
        await prepareBandMedia(
          x264,
          runner,
          {
            dir: staging,
            width: video.width!,
            height: video.height!,
            fps,
            gop: framesPerSegment(fps),
            hasAudio: video.hasAudio,
            segmentDurations: durations,
            timeOrigin,
            encode: this.parts.encode,
            workers: this.parts.workers,
            severalBands: SEVERAL_BANDS,
          },
          (done, total) => report(done, total, 'band encode'),
          signal,
        );
      } else if (off && !chosen) sayOnce(off);
      const published = await publishDir(staging, this.media.fileOf(mediaKeys.video(video.id)));
      if (published !== 'published') throw new WmarkError('PUBLISH_FAILED', `video folder ${video.id} already exists`);
      return { status: 'INGESTED', segments: durations, timeOrigin, durationSeconds: Number(durations.reduce((a, b) => a + b, 0).toFixed(6)) };
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
  }
}
