/* The camera layout every bundle-adjustment variant reads: 11 numbers per camera. */
#ifndef BA_LAYOUT_H
#define BA_LAYOUT_H
enum { CAM_ROT = 0, CAM_CENTER = 3, CAM_FOCAL = 6, CAM_PRINCIPAL = 7, CAM_RADIAL = 9, CAM_SIZE = 11 };
#endif
