#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "core/http.h"

namespace kforge {

std::string HttpResponse::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return "";
}

namespace {

struct Transfer {
  const HttpRequest* request;
  HttpResponse* response;
  bool too_large = false;
  bool stopped = false;
  bool cancelled = false;
};

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->request->cancelled && t->request->cancelled()) {
    t->cancelled = true;
    return 1;  // aborts the transfer with CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->response->body.size() + n > t->request->max_response_bytes) {
    t->too_large = true;
    return 0;  // makes curl fail the transfer with CURLE_WRITE_ERROR
  }
  t->response->body.append(data, n);
  if (t->request->on_body && !t->request->on_body(std::string_view(data, n))) {
    t->stopped = true;
    return 0;
  }
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) t->response->headers.clear();  // a new response (after 100)
  size_t colon = line.find(':');
  if (colon != std::string_view::npos && t->response->headers.size() < 256) {
    std::string key(line.substr(0, colon));
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
      value.remove_suffix(1);
    t->response->headers.emplace_back(std::move(key), std::string(value).substr(0, 8192));
  }
  return n;
}

}  // namespace

CurlHttpClient::CurlHttpClient() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

HttpResponse CurlHttpClient::Send(const HttpRequest& request) {
  HttpResponse response;
  if (request.url.rfind("http://", 0) != 0 && request.url.rfind("https://", 0) != 0) {
    response.error = "the URL '" + request.url + "' is not an http:// or https:// address";
    return response;
  }
  CURL* curl = curl_easy_init();
  if (curl == nullptr) {
    response.error = "libcurl could not start a transfer";
    return response;
  }
  Transfer transfer{&request, &response};
  char error[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  for (const auto& [k, v] : request.headers) headers = curl_slist_append(headers, (k + ": " + v).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_ms));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout_ms));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  if (request.cancelled) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &transfer);
  }
  if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  }
  CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  double seconds = 0;
  curl_easy_getinfo(curl, CURLINFO_TOTAL_TIME, &seconds);
  response.status = static_cast<int>(status);
  response.seconds = seconds;
  if (transfer.too_large)
    response.error =
        "the response from " + request.url + " is larger than " + std::to_string(request.max_response_bytes) + " bytes";
  else if (transfer.cancelled)
    response.error = "the request to " + request.url + " was cancelled";
  else if (transfer.stopped)
    response.error = "the transfer was stopped by the reader";
  else if (rc != CURLE_OK)
    response.error = request.url + ": " + (error[0] ? std::string(error) : std::string(curl_easy_strerror(rc)));
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return response;
}

}  // namespace kforge
