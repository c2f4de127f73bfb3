#include "testing/http_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "core/loopback.h"

namespace kforge::testing {
namespace {

void WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client went away: fine for a test server
    off += static_cast<size_t>(n);
  }
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

ScriptedHttpServer::ScriptedHttpServer(ByRequest, std::function<ScriptedReply(const ReceivedRequest&)> respond)
    : ScriptedHttpServer(std::vector<ScriptedReply>{}) {
  std::lock_guard<std::mutex> lock(mu_);
  respond_ = std::move(respond);
}

ScriptedHttpServer::ScriptedHttpServer(std::vector<ScriptedReply> script) : script_(std::move(script)) {
  std::string error;
  listen_ = ListenOnLoopback(8, &port_, &error);
  if (!listen_.valid()) throw std::runtime_error(error);
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  stop_read_.Reset(p[0]);
  stop_write_.Reset(p[1]);
  thread_ = std::thread([this] { Serve(); });
}

ScriptedHttpServer::~ScriptedHttpServer() {
  char c = 'x';
  (void)!::write(stop_write_.get(), &c, 1);
  thread_.join();
}

std::vector<ReceivedRequest> ScriptedHttpServer::received() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_;
}

void ScriptedHttpServer::Serve() {
  for (;;) {
    pollfd fds[2] = {{listen_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    ScopedFd conn(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (conn.valid()) Answer(conn.get());
  }
}

void ScriptedHttpServer::Answer(int fd) {
  std::string data;
  char buf[4096];
  size_t header_end;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    data.append(buf, static_cast<size_t>(n));
  }
  ReceivedRequest req;
  std::string head = data.substr(0, header_end);
  size_t line_end = head.find("\r\n");
  std::string request_line = head.substr(0, line_end);
  size_t sp1 = request_line.find(' '), sp2 = request_line.rfind(' ');
  req.method = request_line.substr(0, sp1);
  req.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  for (size_t pos = line_end + 2; pos < head.size();) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string::npos) end = head.size();
    std::string line = head.substr(pos, end - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      req.headers[Lower(line.substr(0, colon))] = value;
    }
    pos = end + 2;
  }
  size_t length = req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
  std::string body = data.substr(header_end + 4);
  while (body.size() < length) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    body.append(buf, static_cast<size_t>(n));
  }
  req.body = body.substr(0, length);
  ScriptedReply reply;
  {
    std::lock_guard<std::mutex> lock(mu_);
    received_.push_back(req);
    if (respond_)
      reply = respond_(req);
    else if (next_ < script_.size())
      reply = script_[next_++];
    else
      reply = ScriptedReply{500, {}, "the test server's script has no reply left", {}, 0, 0};
  }
  if (reply.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(reply.delay_ms));
  std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " Scripted\r\nConnection: close\r\n";
  for (const auto& [k, v] : reply.headers) out += k + ": " + v + "\r\n";
  if (reply.chunks.empty()) {
    out += "Content-Length: " + std::to_string(reply.body.size()) + "\r\n\r\n" + reply.body;
    WriteAll(fd, out);
    return;
  }
  out += "Transfer-Encoding: chunked\r\n\r\n";
  WriteAll(fd, out);
  char size[32];
  for (const auto& c : reply.chunks) {
    std::snprintf(size, sizeof size, "%zx\r\n", c.size());
    WriteAll(fd, size + c + "\r\n");
    if (reply.chunk_gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(reply.chunk_gap_ms));
  }
  WriteAll(fd, "0\r\n\r\n");
}

}  // namespace kforge::testing
