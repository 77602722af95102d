// A dashboard of one server: Shlink's published web component with the SDK's API client and its
// fetch HTTP client, as the component's README and its own dev app mount it. The server (its
// base URL and API key) is handed in by the page that loads this (window.SHLINK_SERVER), so one
// build serves every test run; the server's version comes from its health check, as there.
import { ShlinkApiClient } from '@shlinkio/shlink-js-sdk';
import { FetchHttpClient } from '@shlinkio/shlink-js-sdk/fetch';
import { ShlinkWebComponent } from '@shlinkio/shlink-web-component';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import './app.css';

const root = createRoot(document.getElementById('root'));
const server = window.SHLINK_SERVER;

// Tag colours kept for the page's life only: the test starts from nothing each time.
const colors = {};
const tagColorsStorage = {
  getTagColors: () => colors,
  storeTagColors: (changed) => Object.assign(colors, changed),
};

if (!server) {
  root.render(createElement('p', null, 'No server given (window.SHLINK_SERVER).'));
} else {
  const apiClient = new ShlinkApiClient(new FetchHttpClient(), {
    baseUrl: server.baseUrl,
    apiKey: server.apiKey,
  });
  apiClient.health().then(
    ({ version }) => {
      root.render(
        createElement(ShlinkWebComponent, {
          serverVersion: version,
          apiClient,
          tagColorsStorage,
          settings: {},
        }),
      );
    },
    (error) => root.render(createElement('p', { role: 'alert' }, `Health check failed: ${error}`)),
  );
}
