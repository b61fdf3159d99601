// `wmark demo`: the main job on the built-in sample: generate it, ingest it, watermark it for one viewer, print the links.
import path from 'node:path';
import type { Command } from 'commander';
import { ingestVideo } from '../../engine/ingest.js';
import { generateVideo, SAMPLE, samplePath } from '../../engine/sample-video.js';
import { getTemplate } from '../../engine/templates.js';
import { requestWatermark, runWatermarkJob } from '../../engine/watermark.js';
import { watermarkView } from '../../engine/watermark-view.js';
import { renderTemplate } from '../../core/render-template.js';
import { usageError, validationError } from '../../core/errors.js';
import type { TemplateSetting } from '../../core/settings.js';
import { action } from '../program.js';
import { renderView } from './watermark.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the whole pipeline on a generated sample video and print the results')
    .option('--viewer <name>', 'viewer name drawn on the video', 'Ada Lovelace')
    .option('--email <email>', 'viewer email drawn on the video', 'ada@example.com')
    .action(
      action(async (ctx, opts: { viewer: string; email: string }) => {
        const engine = await ctx.openEngine();
        const config = await ctx.loadConfig();
        const sample = samplePath(engine.paths.root);
        ctx.output.stage(`generating the sample video (${SAMPLE.width}x${SAMPLE.height}, ${SAMPLE.seconds} s)`);
        await generateVideo(engine.runner, { output: sample, ...SAMPLE, kind: 'natural' }, (f) => ctx.output.progress(`generating sample ${(f * 100).toFixed(0)}%`));
        ctx.output.stage('ingesting the sample');
        const { video } = await ingestVideo(engine, { source: sample, key: 'wmark-sample', name: 'wmark built-in sample' }, {
          onProgress: (f) => ctx.output.progress(`ingesting ${(f * 100).toFixed(0)}%`),
        });
        const template = getTemplate(engine, 'viewer-corner');
        const rendered = renderTemplate(template.settings as TemplateSetting[], { name: opts.viewer, email: opts.email }, '2.0');
        if (!rendered.ok) throw validationError('DEMO_TEMPLATE', rendered.issues);
        if (!rendered.value.length) throw usageError('DEMO_TEMPLATE', 'built-in template is empty');
        const request = requestWatermark(engine, { video: { videoId: video.id }, settings: rendered.value, containers: ['m3u8', 'mp4'] });
        const started = Date.now();
        let playableAfter: number | undefined;
        const record = await runWatermarkJob(
          engine,
          request.watermark.id,
          {
            onPlayable: () => (playableAfter ??= Date.now() - started),
            onProgress: (done, total) => ctx.output.progress(`watermarking for ${opts.viewer}: segment ${done}/${total}`),
          },
          ctx.signal,
        );
        const view = watermarkView(engine, record, video, {
          baseUrl: config.publicUrl ?? `http://${config.server.host}:${config.server.port}`,
          apiVersion: '2.0',
          created: request.created,
        });
        const summary = { sample, video: video.id, template: template.id, playableAfterMs: playableAfter ?? 0, watermark: view };
        ctx.output.result(summary, (c) =>
          [
            `${c.bold('sample')}    ${path.relative(ctx.io.cwd, sample) || sample}`,
            renderView(view, c),
            request.created ? `  ${c.dim(`playable after ${((playableAfter ?? 0) / 1000).toFixed(2)} s, complete after ${((Date.now() - started) / 1000).toFixed(2)} s`)}` : '',
            '',
            `Play it: ffplay "${view.files.m3u8 ?? view.files.dir}"  (or open ${view.files.mp4 ?? view.files.dir})`,
          ].join('\n'),
        );
      }),
    );
}
