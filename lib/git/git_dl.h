/*
 * libgit2, loaded at the first use of a repository (dlopen) instead of
 * linked: linking it brought 16 shared libraries (SSH, TLS, Kerberos,
 * HTTP parsing) into every program that links this library, git or not
 * (docs/embedding.md, "Start-up and the libraries loaded on first use").
 * Only lib/git/ and lib/core/init.c call libgit2; they include this header
 * (through git_internal.h) and reach libgit2 after agti_git_ensure()
 * succeeded; the git_* names below then go through the loaded table, whose
 * slots have the exact types of the functions in <git2.h>.
 */
#ifndef AGTI_GIT_GIT_DL_H
#define AGTI_GIT_GIT_DL_H

#include <git2.h>
#include <git2/sys/odb_backend.h>

/* Every libgit2 function the library calls. */
#define AGTI_GIT_FUNCTIONS(X)                                                                      \
    X(git_attr_get_many)                                                                           \
    X(git_attr_value)                                                                              \
    X(git_blob_free)                                                                               \
    X(git_blob_lookup)                                                                             \
    X(git_blob_rawcontent)                                                                         \
    X(git_blob_rawsize)                                                                            \
    X(git_buf_dispose)                                                                             \
    X(git_commit_free)                                                                             \
    X(git_commit_id)                                                                               \
    X(git_commit_lookup)                                                                           \
    X(git_commit_parent)                                                                           \
    X(git_commit_parent_id)                                                                        \
    X(git_commit_parentcount)                                                                      \
    X(git_commit_tree)                                                                             \
    X(git_config_free)                                                                             \
    X(git_config_get_string_buf)                                                                   \
    X(git_config_parse_bool)                                                                       \
    X(git_diff_find_options_init)                                                                  \
    X(git_diff_find_similar)                                                                       \
    X(git_diff_free)                                                                               \
    X(git_diff_get_delta)                                                                          \
    X(git_diff_index_to_workdir)                                                                   \
    X(git_diff_merge)                                                                              \
    X(git_diff_num_deltas)                                                                         \
    X(git_diff_options_init)                                                                       \
    X(git_diff_tree_to_index)                                                                      \
    X(git_diff_tree_to_tree)                                                                       \
    X(git_error_last)                                                                              \
    X(git_filter_list_free)                                                                        \
    X(git_filter_list_load)                                                                        \
    X(git_index_entrycount)                                                                        \
    X(git_index_free)                                                                              \
    X(git_index_get_byindex)                                                                       \
    X(git_index_get_bypath)                                                                        \
    X(git_index_open)                                                                              \
    X(git_libgit2_init)                                                                            \
    X(git_libgit2_opts)                                                                            \
    X(git_libgit2_shutdown)                                                                        \
    X(git_merge_base)                                                                              \
    X(git_object_free)                                                                             \
    X(git_object_peel)                                                                             \
    X(git_odb_backend_data_free)                                                                   \
    X(git_odb_free)                                                                                \
    X(git_odb_get_backend)                                                                         \
    X(git_odb_num_backends)                                                                        \
    X(git_oid_equal)                                                                               \
    X(git_oid_is_zero)                                                                             \
    X(git_oid_tostr)                                                                               \
    X(git_patch_free)                                                                              \
    X(git_patch_from_diff)                                                                         \
    X(git_patch_get_delta)                                                                         \
    X(git_patch_get_hunk)                                                                          \
    X(git_patch_get_line_in_hunk)                                                                  \
    X(git_patch_num_hunks)                                                                         \
    X(git_repository_commondir)                                                                    \
    X(git_repository_config_snapshot)                                                              \
    X(git_repository_free)                                                                         \
    X(git_repository_head_unborn)                                                                  \
    X(git_repository_index)                                                                        \
    X(git_repository_is_bare)                                                                      \
    X(git_repository_is_shallow)                                                                   \
    X(git_repository_odb)                                                                          \
    X(git_repository_open)                                                                         \
    X(git_repository_open_ext)                                                                     \
    X(git_repository_path)                                                                         \
    X(git_repository_workdir)                                                                      \
    X(git_revparse_single)                                                                         \
    X(git_tree_entry_bypath)                                                                       \
    X(git_tree_entry_filemode)                                                                     \
    X(git_tree_entry_free)                                                                         \
    X(git_tree_entry_id)                                                                           \
    X(git_tree_entry_name)                                                                         \
    X(git_tree_entry_type)                                                                         \
    X(git_tree_free)                                                                               \
    X(git_tree_id)                                                                                 \
    X(git_tree_walk)

typedef struct agti_git_api {
#define AGTI_GIT_SLOT(f) __typeof__(f) *f;
    AGTI_GIT_FUNCTIONS(AGTI_GIT_SLOT)
#undef AGTI_GIT_SLOT
} agti_git_api;

extern agti_git_api agti_git;

/* Loads libgit2 (the file whose name the build recorded: AGTI_LIBGIT2_SONAME,
 * the version of the headers; the environment variable AGT_LIBGIT2, when
 * set, names the one file to load instead), checks that its version is the
 * headers' major.minor, and runs git_libgit2_init, once per process,
 * thread-safe. AGT_EUNSUPPORTED with a message naming what was tried when
 * the library is missing, of another version or lacks a function;
 * AGT_EGIT when git_libgit2_init fails. */
int agti_git_ensure(void);
/* git_libgit2_shutdown when it was initialised (agt_shutdown). */
void agti_git_shutdown(void);

#ifndef AGTI_GIT_NO_MACROS /* git_dl.c fills the table by these names */
#define git_attr_get_many (agti_git.git_attr_get_many)
#define git_attr_value (agti_git.git_attr_value)
#define git_blob_free (agti_git.git_blob_free)
#define git_blob_lookup (agti_git.git_blob_lookup)
#define git_blob_rawcontent (agti_git.git_blob_rawcontent)
#define git_blob_rawsize (agti_git.git_blob_rawsize)
#define git_buf_dispose (agti_git.git_buf_dispose)
#define git_commit_free (agti_git.git_commit_free)
#define git_commit_id (agti_git.git_commit_id)
#define git_commit_lookup (agti_git.git_commit_lookup)
#define git_commit_parent (agti_git.git_commit_parent)
#define git_commit_parent_id (agti_git.git_commit_parent_id)
#define git_commit_parentcount (agti_git.git_commit_parentcount)
#define git_commit_tree (agti_git.git_commit_tree)
#define git_config_free (agti_git.git_config_free)
#define git_config_get_string_buf (agti_git.git_config_get_string_buf)
#define git_config_parse_bool (agti_git.git_config_parse_bool)
#define git_diff_find_options_init (agti_git.git_diff_find_options_init)
#define git_diff_find_similar (agti_git.git_diff_find_similar)
#define git_diff_free (agti_git.git_diff_free)
#define git_diff_get_delta (agti_git.git_diff_get_delta)
#define git_diff_index_to_workdir (agti_git.git_diff_index_to_workdir)
#define git_diff_merge (agti_git.git_diff_merge)
#define git_diff_num_deltas (agti_git.git_diff_num_deltas)
#define git_diff_options_init (agti_git.git_diff_options_init)
#define git_diff_tree_to_index (agti_git.git_diff_tree_to_index)
#define git_diff_tree_to_tree (agti_git.git_diff_tree_to_tree)
#define git_error_last (agti_git.git_error_last)
#define git_filter_list_free (agti_git.git_filter_list_free)
#define git_filter_list_load (agti_git.git_filter_list_load)
#define git_index_entrycount (agti_git.git_index_entrycount)
#define git_index_free (agti_git.git_index_free)
#define git_index_get_byindex (agti_git.git_index_get_byindex)
#define git_index_get_bypath (agti_git.git_index_get_bypath)
#define git_index_open (agti_git.git_index_open)
#define git_libgit2_init (agti_git.git_libgit2_init)
#define git_libgit2_opts (agti_git.git_libgit2_opts)
#define git_libgit2_shutdown (agti_git.git_libgit2_shutdown)
#define git_merge_base (agti_git.git_merge_base)
#define git_object_free (agti_git.git_object_free)
#define git_object_peel (agti_git.git_object_peel)
#define git_odb_backend_data_free (agti_git.git_odb_backend_data_free)
#define git_odb_free (agti_git.git_odb_free)
#define git_odb_get_backend (agti_git.git_odb_get_backend)
#define git_odb_num_backends (agti_git.git_odb_num_backends)
#define git_oid_equal (agti_git.git_oid_equal)
#define git_oid_is_zero (agti_git.git_oid_is_zero)
#define git_oid_tostr (agti_git.git_oid_tostr)
#define git_patch_free (agti_git.git_patch_free)
#define git_patch_from_diff (agti_git.git_patch_from_diff)
#define git_patch_get_delta (agti_git.git_patch_get_delta)
#define git_patch_get_hunk (agti_git.git_patch_get_hunk)
#define git_patch_get_line_in_hunk (agti_git.git_patch_get_line_in_hunk)
#define git_patch_num_hunks (agti_git.git_patch_num_hunks)
#define git_repository_commondir (agti_git.git_repository_commondir)
#define git_repository_config_snapshot (agti_git.git_repository_config_snapshot)
#define git_repository_free (agti_git.git_repository_free)
#define git_repository_head_unborn (agti_git.git_repository_head_unborn)
#define git_repository_index (agti_git.git_repository_index)
#define git_repository_is_bare (agti_git.git_repository_is_bare)
#define git_repository_is_shallow (agti_git.git_repository_is_shallow)
#define git_repository_odb (agti_git.git_repository_odb)
#define git_repository_open (agti_git.git_repository_open)
#define git_repository_open_ext (agti_git.git_repository_open_ext)
#define git_repository_path (agti_git.git_repository_path)
#define git_repository_workdir (agti_git.git_repository_workdir)
#define git_revparse_single (agti_git.git_revparse_single)
#define git_tree_entry_bypath (agti_git.git_tree_entry_bypath)
#define git_tree_entry_filemode (agti_git.git_tree_entry_filemode)
#define git_tree_entry_free (agti_git.git_tree_entry_free)
#define git_tree_entry_id (agti_git.git_tree_entry_id)
#define git_tree_entry_name (agti_git.git_tree_entry_name)
#define git_tree_entry_type (agti_git.git_tree_entry_type)
#define git_tree_free (agti_git.git_tree_free)
#define git_tree_id (agti_git.git_tree_id)
#define git_tree_walk (agti_git.git_tree_walk)

#endif

#endif
