# cmake -DSOURCE=dir -DDEST=dir -P link_tree.cmake: links every .py and .pyi
# file under SOURCE into the same place under DEST (a build-tree package).
file(GLOB_RECURSE files RELATIVE ${SOURCE} ${SOURCE}/*.py ${SOURCE}/*.pyi)
foreach(file ${files})
  get_filename_component(dir ${DEST}/${file} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  if(NOT IS_SYMLINK ${DEST}/${file})
    file(CREATE_LINK ${SOURCE}/${file} ${DEST}/${file} SYMBOLIC)
  endif()
endforeach()
