// wmark player: waits while the watermark is PENDING (polling the signed long-poll href every 3 s), then plays the
// signed HLS playlist with hls.js (native HLS only where hls.js is unsupported). States are exposed for tests:
// document.body.dataset.wmarkState = loading | playing | error, and window.wmarkPlayer.
(function () {
  'use strict';
  var POLL_MS = 3000;
  // hls.js's transmuxer alone, beside this script: the worker does not parse the whole library again.
  var WORKER = new URL('../assets/hls.worker.js', document.baseURI).href;
  var params = new URLSearchParams(location.search);
  var sourceUrl = params.get('sourceUrl');
  var href = params.get('href');
  var stage = document.getElementById('stage');
  var video = document.getElementById('video');
  var message = document.getElementById('message');
  var state = { state: 'loading', polls: 0, error: null, hlsError: null };
  window.wmarkPlayer = state;

  function setState(name, text) {
    state.state = name;
    stage.dataset.state = name;
    document.body.dataset.wmarkState = name;
    if (text) message.textContent = text;
  }

  function fail(text) {
    state.error = text;
    setState('error', text);
  }

  function explainStatus(status) {
    if (status === 403) return 'This link is no longer valid. Ask for a new one.';
    if (status === 410) return 'This video has expired.';
    if (status === 404) return 'This video could not be found.';
    return 'The video could not be loaded (HTTP ' + status + ').';
  }

  function autoplay() {
    var attempt = video.play();
    if (attempt && attempt.catch) {
      attempt.catch(function () {
        // Browsers allow autoplay only when muted; start muted and let the viewer unmute.
        video.muted = true;
        video.play().catch(function () {});
      });
    }
  }

  function play(url) {
    setState('loading', 'Loading…');
    video.addEventListener('playing', function () { setState('playing'); }, { once: true });
    if (window.Hls && window.Hls.isSupported()) {
      var hls = new window.Hls({ startPosition: 0, workerPath: WORKER, manifestLoadingMaxRetry: 4, levelLoadingMaxRetry: 4, fragLoadingMaxRetry: 6 });
      state.hls = hls;
      hls.on(window.Hls.Events.ERROR, function (_event, data) {
        if (!data.fatal) return;
        state.hlsError = data.details;
        var code = data.response && data.response.code;
        if (data.type === window.Hls.ErrorTypes.MEDIA_ERROR) return hls.recoverMediaError();
        // Given up: detach, or the element stays "loading" and its native controls spin behind the message.
        hls.destroy();
        if (code === 403 || code === 410 || code === 404) return fail(explainStatus(code));
        fail('Playback failed (' + data.details + ').');
      });
      hls.loadSource(url);
      hls.attachMedia(video);
      hls.on(window.Hls.Events.MANIFEST_PARSED, autoplay);
    } else if (video.canPlayType('application/vnd.apple.mpegurl')) {
      video.src = url;
      video.addEventListener('loadedmetadata', autoplay, { once: true });
      video.addEventListener('error', function () { fail('Playback failed.'); }, { once: true });
    } else {
      fail('This browser cannot play HLS video.');
    }
  }

  function poll() {
    state.polls++;
    fetch(href, { credentials: 'omit', cache: 'no-store' })
      .then(function (response) {
        if (!response.ok) throw { status: response.status };
        return response.json();
      })
      .then(function (body) {
        if (body.status === 'READY' && body.containers && body.containers.m3u8) return play(body.containers.m3u8);
        if (body.status === 'FAILED') return fail('This video could not be prepared.');
        setState('loading', 'Preparing your video…');
        setTimeout(poll, POLL_MS);
      })
      .catch(function (error) {
        // The 1.0 long-poll href expires shortly after READY while the playlist link lives on: a player page (or an
        // embedded iframe) opened later goes straight to the playlist, whose own signature decides.
        if (error && error.status === 403 && sourceUrl) return play(sourceUrl);
        if (error && error.status) return fail(explainStatus(error.status));
        // Network hiccup: keep polling.
        setTimeout(poll, POLL_MS);
      });
  }

  if (href) poll();
  else if (sourceUrl) play(sourceUrl);
  else fail('No video was given to this player.');
})();
