/* Installed-library check: the libcurl easy helper (breakwater-curl_easy),
 * which needs no libevent. No request is sent: a bad argument is refused
 * and a CURLcode is judged. */
#include <breakwater/curl_easy.h>
#include <stdio.h>

int main(void) {
  bw_curl_easy_options_t o;
  bw_curl_result_t res;
  bw_curl_easy_options_init(&o);
  if (!o.idempotent || o.connect_timeout_ms != 2000) return 1;
  if (bw_curl_easy_perform(NULL, NULL, &res) != BW_E_INVAL) return 1;
  if (bw_curl_verdict(CURLE_COULDNT_CONNECT, 0) != BW_VERDICT_NOT_SENT)
    return 1;
  bw_curl_result_clear(&res);
  puts("curl_easy: ok");
  return 0;
}
