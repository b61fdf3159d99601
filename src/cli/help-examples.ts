// The examples every `--help` ends with, by command path ("" is the root): one table, which the help prints and
// test/e2e/help-examples.test.ts runs as printed, so an example that stops working fails a test.
//
// Each is one shell command line, optionally followed by "  # comment". What a reader fills in is written as a
// placeholder the tests know: <id> (a watermark), <video-id>, <template-id>, <client-id>, <href> (a 1.0 answer's
// long-poll link), wmc_... and wmk_... (a client id and its API key).
export const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  '': [
    'wmark demo',
    'wmark ingest movie.mp4   # its key: movie, the file name',
    'wmark watermark --key movie --text "for alice@example.com"',
    'wmark serve --port 0',
  ],
  ingest: [
    'wmark ingest movie.mp4   # key: movie (the file name without its extension)',
    'wmark ingest https://example.com/clip.mp4 --name "Launch clip"   # key: clip',
    'wmark ingest long-film.mp4 --key film --forensic   # 5 minutes or more',
    'wmark ingest recut.mp4 --key movie --replace   # forget the old movie and its watermarks',
    'wmark ingest movie.mp4 --remote https://watermark.example.com',
  ],
  video: ['wmark video list', 'wmark video show movie'],
  'video list': ['wmark video list', 'wmark video list --json', 'wmark video list --remote https://watermark.example.com'],
  'video show': ['wmark video show movie', 'wmark video show <video-id> --json'],
  template: ['wmark template list', 'wmark template show viewer-corner', 'wmark template create my-template.json'],
  'template create': ['wmark template create my-template.json', 'cat my-template.json | wmark template create -'],
  'template list': ['wmark template list', 'wmark template list --json'],
  'template show': ['wmark template show viewer-corner'],
  'template delete': ['wmark template delete <template-id>'],
  watermark: [
    'wmark watermark --key movie --text "for alice@example.com"',
    'wmark watermark --key movie --text "alice" --x 0.95 --y 0.95 --align RIGHT --vertical-align BOTTOM --open',
    'wmark watermark --key movie --template viewer-corner --map name=Alice --map email=alice@example.com',
    'wmark watermark --key movie --image logo.png --x 0.97 --y 0.04 --align RIGHT --vertical-align TOP --image-width 0.15',
    'wmark watermark --key movie --template viewer-corner --batch viewers.csv --json',
    'wmark watermark list',
    'wmark watermark view <id> --open',
    'wmark watermark   # at a terminal: pick a video, type the text',
  ],
  'watermark create': [
    'wmark watermark create --key movie --text "for alice@example.com"',
    'wmark watermark create --key movie --settings settings.json --no-wait',
  ],
  'watermark list': ['wmark watermark list', 'wmark watermark list --key movie --json'],
  'watermark view': ['wmark watermark view <id>', 'wmark watermark view <id> --open'],
  'watermark rm': ['wmark watermark rm <id>', 'wmark watermark list --json | jq -r ".[].id" | xargs wmark watermark rm'],
  serve: [
    'wmark serve',
    'wmark serve --port 0   # any free port; local commands link to it',
    'wmark serve --host 0.0.0.0 --public-url https://videos.example.com',
    'wmark serve --queue redis://10.0.0.5:6379 --media s3://wmark-media/prod   # a render farm: `wmark worker`s on the same bucket do the encodes',
    "wmark serve --queue redis://10.0.0.5:6379   # workers that mount this data folder's media folder",
    'wmark serve --metrics-public   # GET /metrics for a Prometheus on another machine too',
  ],
  status: ['wmark status', 'wmark status --url http://videos.internal:8080 --json'],
  worker: [
    'wmark worker --queue redis://10.0.0.5:6379 --media s3://wmark-media/prod --concurrency 2',
    'wmark worker --queue redis://farm:6379 --media s3://media/farm --s3-endpoint http://minio:9000   # credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY',
    'wmark worker --queue redis://farm:6379 --media /mnt/wmark   # a folder every machine mounts (NFS)',
  ],
  detect: ['wmark detect leaked.mp4 --key film', 'wmark detect leaked.mp4 --key film --json'],
  auth: ['wmark auth keys create --label "my app"', 'wmark auth login --remote https://watermark.example.com   # at a terminal: asks for the key'],
  'auth keys': ['wmark auth keys create --label "my app"', 'wmark auth keys list', 'wmark auth keys revoke <client-id>'],
  'auth keys create': ['wmark auth keys create --label "my app"'],
  'auth keys list': ['wmark auth keys list'],
  'auth keys revoke': ['wmark auth keys revoke <client-id>'],
  'auth login': [
    'wmark auth login --remote https://watermark.example.com   # at a terminal: asks for the client id and API key',
    'WMARK_CLIENT_ID=wmc_... WMARK_API_KEY=wmk_... wmark auth login --remote https://watermark.example.com',
  ],
  'auth status': ['wmark auth status', 'wmark auth status --json'],
  'auth logout': ['wmark auth logout', 'wmark auth logout --all'],
  poll: ["wmark poll '<href>'   # the href of a 1.0 watermark answer"],
  doctor: [
    'wmark doctor',
    'wmark doctor --json',
    'wmark doctor --db postgres://wmark:PASSWORD@db.internal:5432/wmark   # reachable? its schema against this wmark; changes nothing',
    'wmark doctor --queue redis://10.0.0.5:6379 --media /mnt/wmark',
  ],
  db: ['wmark db copy --to postgres://wmark:PASSWORD@db.internal:5432/wmark   # keys, videos, templates, watermarks, jobs'],
  'db copy': ['wmark --json db copy --to postgres://wmark:PASSWORD@db.internal:5432/wmark   # into an empty database'],
  demo: ['wmark demo', 'wmark demo --viewer "Grace Hopper" --email grace@example.com', 'wmark demo --port 0 --no-keep-serving'],
  completion: [
    'wmark completion bash >> ~/.bashrc',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ${fpath[1]} is zsh's, for the shell to expand
    'wmark completion zsh > "${fpath[1]}/_wmark"',
    'wmark completion fish > ~/.config/fish/completions/wmark.fish',
  ],
};
