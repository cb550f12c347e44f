import { All, Controller, UseFilters } from '@nestjs/common';
import { AuthError, AuthErrorFilter } from '../common/index.js';

@Controller('a/:slug')
@UseFilters(AuthErrorFilter)
export class NotFoundController {
  @All('*path')
  notFound(): never {
    throw new AuthError(404, 'NOT_FOUND', 'Not found');
  }
}
