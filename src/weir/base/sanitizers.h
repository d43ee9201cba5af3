// Whether the build runs under a sanitizer, for gcc and clang alike (clang
// 14 does not define gcc's __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define WEIR_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEIR_ADDRESS_SANITIZER 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define WEIR_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEIR_THREAD_SANITIZER 1
#endif
#endif
