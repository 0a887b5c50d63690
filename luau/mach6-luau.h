/* SPDX-License-Identifier: MIT */
/* mach6-luau.h — mach6 for engines that embed Luau: the original library's
 * API (profiler.mark/done/root/convert, sample) in a lua_State, computed
 * in-process on libmach6-core, every mark and done also written to the
 * shared-memory ring so the viewer and `mach6 record` can attach.
 *
 * Linkage: Luau's own API (lua.h) is C++-linked as Luau builds by default,
 * so the binding is compiled as C++ (C++17) against it. Its entry points
 * below are extern "C", so a host may call them from C or C++. docs/luau.md
 * is the embedder's guide.
 */
#ifndef MACH6_LUAU_H
#define MACH6_LUAU_H

struct lua_State;

#ifdef __cplusplus
extern "C" {
#endif

/* Leave the global pcall and xpcall as they are (see mach6_luau_open). */
#define MACH6_LUAU_KEEP_PCALL 1u

/* Push the mach6 table ({profiler, sample, heap, attached, thread_name,
 * depth}) for @L's Luau state, creating the state's profiler on first use
 * (later calls push the same table). Installs the state's resume and
 * thread callbacks (calling on to any set before) and, unless @flags has
 * MACH6_LUAU_KEEP_PCALL, wraps the global pcall and xpcall so an error
 * closes the scopes opened inside them. Call it before luaL_sandbox(). */
int  mach6_luau_open   (struct lua_State *L, unsigned flags);

/* The scopes open in @L's thread (coroutine), for mach6_luau_unwind(). */
int  mach6_luau_depth  (struct lua_State *L);

/* Close the scopes of @L's thread above @depth: a host that runs a callback
 * with lua_pcall calls this when it fails, so the error does not leave the
 * callback's scopes open. */
void mach6_luau_unwind (struct lua_State *L, int depth);

#ifdef __cplusplus
}
#endif

#endif /* MACH6_LUAU_H */
